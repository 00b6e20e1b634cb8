import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { makeWorld } from '../../test/fixtures/world.ts';
import { localKeyWrapper, Vault } from './vault.ts';

describe.each(testBackends())('credential vault on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('stores credentials only encrypted, reads them back, and survives a master key rotation', async () => {
    const w = await makeWorld(store, { leads: 0, mailboxes: 2, nowMs: Date.now(), random: seededRandom(3) });
    const master = randomBytes(32);
    const vault = new Vault(store, localKeyWrapper(master));
    await vault.put(w.workspaceId, w.mailboxIds[0]!, { kind: 'password', username: 'rep0@acme.test', password: 'hunter2-secret' });
    await vault.put(w.workspaceId, w.mailboxIds[1]!, { kind: 'oauth', accessToken: 'ya29.token', refreshToken: '1//refresh' });

    // Nothing in the database reads as the secret.
    const dump = await sql<{ t: string }>`select string_agg(encode(ciphertext, 'escape'), '') || (select string_agg(encode(wrapped_key, 'escape'), '') from workspace_key) as t from mailbox_credential`.execute(store.db);
    expect(dump.rows[0]!.t).not.toMatch(/hunter2|ya29|refresh/);

    expect(await vault.get(w.mailboxIds[0]!)).toEqual({ kind: 'password', username: 'rep0@acme.test', password: 'hunter2-secret' });

    const next = randomBytes(32);
    expect(await Vault.rotateMaster(store, localKeyWrapper(master), localKeyWrapper(next))).toEqual({ rewrapped: 1 });
    expect(await new Vault(store, localKeyWrapper(next)).get(w.mailboxIds[1]!)).toMatchObject({ accessToken: 'ya29.token' });
    await expect(new Vault(store, localKeyWrapper(master)).get(w.mailboxIds[1]!)).rejects.toThrow(/master key does not unwrap/);
  });

  it('refuses a ciphertext moved to another mailbox', async () => {
    const w = await makeWorld(store, { leads: 0, mailboxes: 2, nowMs: Date.now(), random: seededRandom(4) });
    const vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    await vault.put(w.workspaceId, w.mailboxIds[0]!, { kind: 'password', username: 'a', password: 'b' });
    const row = await store.db.selectFrom('mailbox_credential').selectAll().where('mailbox_id', '=', w.mailboxIds[0]!).executeTakeFirstOrThrow();
    await store.db.insertInto('mailbox_credential').values({ mailbox_id: w.mailboxIds[1]!, kind: 'password', ciphertext: row.ciphertext }).execute();
    await expect(vault.get(w.mailboxIds[1]!)).rejects.toThrow(/failed to decrypt/);
  });
});

import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyFingerprint, readMasterKey } from '../common/secrets.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { checkKeyAgainstStore, keyProblem, openMasterKey } from './master-key.ts';
import { localKeyWrapper, Vault } from './vault.ts';

describe.each(testBackends())('the master key against the store (%s)', (backend) => {
  let store: TestStore;
  let dir: string;
  beforeEach(async () => {
    store = await freshStore(backend);
    dir = mkdtempSync(join(tmpdir(), 'cadenza-mk-'));
  });
  afterEach(async () => {
    await store.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  async function sealOne(key: Buffer): Promise<string> {
    const ws = await store.db.selectFrom('workspace').select('id').executeTakeFirst();
    const id = ws?.id ?? '00000000-0000-4000-8000-000000000001';
    if (!ws) await store.db.insertInto('workspace').values({ id, name: 'W', time_zone: 'UTC' }).execute();
    await new Vault(store, localKeyWrapper(key)).seal(id, 'test:1', 'hello');
    return id;
  }

  it('creates a key only for a store without wrapped keys, and reads it back after', async () => {
    const a = await openMasterKey(store, { dataDir: dir, env: {} });
    expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    await sealOne(a);
    expect((await openMasterKey(store, { dataDir: dir, env: {} })).equals(a)).toBe(true);
  });

  it('refuses to start when wrapped keys exist and master.key is gone, instead of making a new key', async () => {
    const a = await openMasterKey(store, { dataDir: dir, env: {} });
    await sealOne(a);
    unlinkSync(join(dir, 'master.key'));
    await expect(openMasterKey(store, { dataDir: dir, env: {} })).rejects.toThrow(
      new RegExp(`no master key found, but the store holds 1 workspace key.*fingerprint ${keyFingerprint(a)}.*master\\.key`),
    );
    expect(existsSync(join(dir, 'master.key'))).toBe(false);
  });

  it('refuses a key that is not the one the store was wrapped with, naming both fingerprints', async () => {
    const a = randomBytes(32);
    await sealOne(a);
    const b = randomBytes(32);
    const env = { CADENZA_MASTER_KEY: b.toString('base64') };
    const err = await openMasterKey(store, { dataDir: dir, env }).catch((e: Error) => e);
    expect((err as Error).message).toContain(`CADENZA_MASTER_KEY (fingerprint ${keyFingerprint(b)})`);
    expect((err as Error).message).toContain(keyFingerprint(a));
    expect(await openMasterKey(store, { dataDir: dir, env: { CADENZA_MASTER_KEY: a.toString('base64') } })).toEqual(a);
  });

  it('verify reports the wrapped keys by fingerprint', async () => {
    const a = randomBytes(32);
    await sealOne(a);
    expect(await checkKeyAgainstStore(store, a)).toEqual({ fingerprint: keyFingerprint(a), wrapped: { [keyFingerprint(a)]: 1 }, mismatched: 0 });
    const wrong = await checkKeyAgainstStore(store, randomBytes(32));
    expect(wrong.mismatched).toBe(1);
    expect(keyProblem(wrong, 'x')).toMatch(/is not the one/);
  });
});

describe('reading the master key', () => {
  it('never creates one, and a malformed one is a clear error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-mk-'));
    try {
      expect(readMasterKey({ dataDir: dir, env: {} })).toBeUndefined();
      expect(existsSync(join(dir, 'master.key'))).toBe(false);
      writeFileSync(join(dir, 'master.key'), 'short\n');
      expect(() => readMasterKey({ dataDir: dir, env: {} })).toThrow(/32 bytes/);
      expect(() => readMasterKey({ dataDir: dir, env: { CADENZA_MASTER_KEY_FILE: join(dir, 'nope') } })).toThrow(/does not exist/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

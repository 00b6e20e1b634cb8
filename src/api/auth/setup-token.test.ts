import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { SETUP_TOKEN_FILE, setupTokenInDataDir, setupTokenValid } from './setup-token.ts';

describe.each(testBackends())('the setup token in the data folder (%s)', (backend) => {
  let store: TestStore | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await store?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
    store = undefined;
  });

  it('is written 0600, kept across restarts, valid in the store, and removed once an account exists', async () => {
    store = await freshStore(backend);
    dir = join(mkdtempSync(join(tmpdir(), 'cadenza-setup-token-')), 'data');
    const first = await setupTokenInDataDir(store, dir);
    expect(first?.file).toBe(join(dir, SETUP_TOKEN_FILE));
    expect(statSync(first!.file).mode & 0o777).toBe(0o600);
    expect(readFileSync(first!.file, 'utf8').trim()).toBe(first!.token);
    expect(await setupTokenValid(store.db, first!.token)).toBe(true);
    // A restart prints the same token: what the operator copied still works.
    expect((await setupTokenInDataDir(store, dir))?.token).toBe(first!.token);
    await store.db.insertInto('account').values({ id: '01a228f2-0000-7000-8000-00000000000a', email: 'o@example.test', password_hash: 'x' }).execute();
    expect(await setupTokenInDataDir(store, dir)).toBeUndefined();
    expect(existsSync(first!.file)).toBe(false);
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cadenza as run } from '../../../test/cli/cadenza-process.ts';
import { embeddedDbDir } from '../../common/config.ts';
import { keyFingerprint } from '../../common/secrets.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { migrate } from '../../store/migrate.ts';
import { openStore } from '../../store/store.ts';

describe('cadenza keys verify', () => {
  let dir: string;
  const key = randomBytes(32);
  const cadenza = (args: string[], masterKey: Buffer) =>
    run(['--data-dir', join(dir, 'data'), ...args], { cwd: dir, embedded: true, env: { CADENZA_MASTER_KEY: masterKey.toString('base64') } });
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-keys-'));
    const store = await openStore({ dataDir: embeddedDbDir(join(dir, 'data')) });
    await migrate(store);
    const ws = '00000000-0000-4000-8000-00000000000a';
    await store.db.insertInto('workspace').values({ id: ws, name: 'K', time_zone: 'UTC' }).execute();
    await new Vault(store, localKeyWrapper(key)).seal(ws, 'test:1', 'x');
    await store.close();
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says the right key unwraps every workspace key, and refuses another one (exit 2) with both fingerprints', { timeout: 120_000 }, () => {
    const ok = cadenza(['keys', 'verify'], key);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`fingerprint ${keyFingerprint(key)}) unwraps all 1 workspace key(s)`);
    const other = randomBytes(32);
    const bad = cadenza(['keys', 'verify'], other);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`fingerprint ${keyFingerprint(other)}`);
    expect(bad.stderr).toContain(keyFingerprint(key));
  });
});

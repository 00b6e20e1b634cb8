import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateMasterKey } from '../../cli/commands/keys.ts';
import { seededRandom } from '../../common/random.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { makeWorld } from '../../../test/fixtures/world.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { accountKeyContext } from './account-keys.ts';
import { openCertificate, sealCertificate } from './certificates.ts';
import { acmeAccount, insertAcmeAccount, setAcmeAccountUrl } from './sql/acme.ts';
import { domainOfWorkspace, setDomain, storeCertificate } from './sql/tracking-domain.ts';

/**
 * `cadenza keys rotate` and the tracking domains' keys: the ACME account key (wrapped by the
 * master key itself) is rewrapped with the workspaces' data keys, keeping the account's URL, and
 * a certificate sealed with a workspace's data key opens after the rotation with the new master
 * key. The Pebble test (custom-domain.acme.test.ts) renews through a real CA after a rotation.
 */
describe.each(testBackends())('master key rotation and tracking domains on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('rewraps the ACME account key (same key, same account URL) and leaves certificates openable', async () => {
    const w = await makeWorld(store, { leads: 0, mailboxes: 0, nowMs: Date.now(), random: seededRandom(41) });
    const [current, next] = [randomBytes(32), randomBytes(32)];
    const directory = 'https://ca.rotate.test/dir';
    const accountKey = Buffer.from('-----BEGIN PRIVATE KEY-----\naccount\n-----END PRIVATE KEY-----\n');
    await insertAcmeAccount(store.db, directory, localKeyWrapper(current).wrap(accountKey, accountKeyContext(directory)));
    await setAcmeAccountUrl(store.db, directory, 'https://ca.rotate.test/acct/7');
    // An account from before rotations rewrapped them: wrapped by a key long gone.
    const stale = 'https://stale.rotate.test/dir';
    await insertAcmeAccount(store.db, stale, localKeyWrapper(randomBytes(32)).wrap(accountKey, accountKeyContext(stale)));

    const host = 'track.rotate.test';
    const now = Date.now();
    expect(await setDomain(store.db, w.workspaceId, host, now)).toBe('set');
    const pair = { certPem: '-----BEGIN CERTIFICATE-----\nleaf\n-----END CERTIFICATE-----\n', keyPem: '-----BEGIN PRIVATE KEY-----\ncert\n-----END PRIVATE KEY-----\n' };
    const sealed = await sealCertificate(new Vault(store, localKeyWrapper(current)), w.workspaceId, host, pair);
    const row = (await domainOfWorkspace(store.db, w.workspaceId))!;
    expect(await storeCertificate(store.db, row, { sealed, notBefore: now, notAfter: now + 90 * 86_400_000, nextAttemptAt: now + 60 * 86_400_000 }, now)).toBe(true);

    const r = await rotateMasterKey(store, current, next);
    expect(r.rewrapped).toBeGreaterThanOrEqual(1);
    expect(r.acmeAccounts).toEqual({ rewrapped: 1, unreadable: [stale] });

    const after = (await acmeAccount(store.db, directory))!;
    expect(localKeyWrapper(next).unwrap(after.wrappedKey, accountKeyContext(directory))).toEqual(accountKey);
    expect(() => localKeyWrapper(current).unwrap(after.wrappedKey, accountKeyContext(directory))).toThrow();
    expect(after.accountUrl).toBe('https://ca.rotate.test/acct/7');
    // The wrapped key stays bound to its directory: moved to another row it does not open.
    expect(() => localKeyWrapper(next).unwrap(after.wrappedKey, accountKeyContext(stale))).toThrow();

    const stored = (await domainOfWorkspace(store.db, w.workspaceId))!;
    expect(await openCertificate(new Vault(store, localKeyWrapper(next)), w.workspaceId, host, stored.sealedCert!)).toEqual(pair);
    await expect(openCertificate(new Vault(store, localKeyWrapper(current)), w.workspaceId, host, stored.sealedCert!)).rejects.toThrow(/master key does not unwrap/);

    // Run again with the same new key (an operator retrying): nothing to do, nothing broken.
    expect(await rotateMasterKey(store, current, next)).toEqual({ rewrapped: 0, sealed: 0, acmeAccounts: { rewrapped: 0, unreadable: [stale] } });
    expect(localKeyWrapper(next).unwrap((await acmeAccount(store.db, directory))!.wrappedKey, accountKeyContext(directory))).toEqual(accountKey);
  });
});

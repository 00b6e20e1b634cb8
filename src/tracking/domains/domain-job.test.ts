import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { Leases } from '../../ops/leases.ts';
import { seededRandom } from '../../common/random.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { ensureDefaultWorkspace } from '../../workspace/workspaces.ts';
import { freePorts, pebbleInstalled, startPebble, type Pebble } from '../../../test/acme/pebble.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { AcmeIssuer } from './acme-issuer.ts';
import { leafValidity, openCertificate } from './certificates.ts';
import { challengeRoute } from './challenge-route.ts';
import { dnsResolver } from './cname-check.ts';
import { DomainJob } from './domain-job.ts';
import { backoffMs, DNS_RECHECK_MS, renewAt } from './policy.ts';
import { acmeAccount, putChallenge } from './sql/acme.ts';
import { domainOfWorkspace, setDomain } from './sql/tracking-domain.ts';

/**
 * The job's decisions on a simulated clock (when to look again, renew, back off, give up), with
 * the real parts under it: the test's DNS server, Pebble issuing over HTTP-01, the store. The
 * clock only decides; Pebble dates its certificates by the real time, which the clock starts at.
 */
const PUBLIC = 'cadenza.test';

describe.skipIf(!pebbleInstalled() && !process.env.CI).each(testBackends())('tracking domain job (%s)', (backend) => {
  let dns: TestDnsServer;
  let pebble: Pebble;
  let store: TestStore;
  let web: FastifyInstance;
  let clock: SimClock;
  let vault: Vault;
  let job: (owner: string) => DomainJob;
  let ws: string;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    const [httpPort] = await freePorts(1);
    pebble = await startPebble({ dnsServer: dns.address, httpPort: httpPort! });
    store = await freshStore(backend);
    clock = new SimClock(Date.now());
    // The challenge answered where Pebble validates: 127.0.0.1 only, so a name resolving to
    // 127.0.0.2 is a host that does not reach us.
    web = Fastify();
    challengeRoute(web, { db: store.db, clock });
    await web.listen({ port: httpPort!, host: '127.0.0.1' });
    vault = new Vault(store, localKeyWrapper(Buffer.alloc(32, 3)));
    const issuer = new AcmeIssuer({ db: store.db, wrapper: localKeyWrapper(Buffer.alloc(32, 3)), clock, settings: { directoryUrl: pebble.directoryUrl, directoryCa: pebble.directoryCa, pollMinMs: 100, pollAttempts: 5 } });
    job = (owner) => new DomainJob({ db: store.db, leases: new Leases(store, clock), owner, clock, resolver: dnsResolver([dns.address]), publicHost: PUBLIC, issuer, vault });
    ws = await ensureDefaultWorkspace(store, { clock, random: seededRandom('domain-job') });
  }, 60_000);

  afterAll(async () => {
    await web?.close();
    await store?.destroy();
    await pebble?.close();
    await dns?.close();
  });

  it('waits for the CNAME, backs off on a failed validation, issues, renews at 2/3 of the lifetime, and gives up past the end', async () => {
    const host = 'links.shop.test';
    const j = job('p1');
    await setDomain(store.db, ws, host, clock.now());

    // No CNAME: pending, looked at again in minutes.
    expect(await j.runOnce()).toEqual([{ host, state: 'pending_dns', reason: expect.stringContaining('has no CNAME record yet') }]);
    expect((await domainOfWorkspace(store.db, ws))!.nextAttemptAt).toBe(clock.now() + DNS_RECHECK_MS);
    expect(await j.runOnce()).toEqual([]);

    // A CNAME elsewhere is named in the reason.
    dns.setCname(host, 'elsewhere.example');
    clock.advance(DNS_RECHECK_MS);
    expect((await j.runOnce())[0]!.reason).toBe(`${host} is a CNAME to elsewhere.example, not to ${PUBLIC}`);

    // The CNAME is right but the name reaches nothing of ours: Pebble's validation fails, and
    // the job backs off, doubling (the DNS checks before counted as failures too).
    dns.setCname(host, PUBLIC);
    dns.setA(PUBLIC, ['127.0.0.2']);
    clock.advance(DNS_RECHECK_MS);
    let out = await j.runOnce();
    expect(out).toEqual([{ host, state: 'failed', reason: expect.stringContaining('the certificate authority did not issue a certificate') }]);
    expect(out[0]!.reason).toContain('connection refused');
    let row = (await domainOfWorkspace(store.db, ws))!;
    const n = row.attempts;
    expect(n).toBe(3);
    expect(row.nextAttemptAt).toBe(clock.now() + backoffMs(n));
    clock.advance(backoffMs(n));
    expect((await j.runOnce())[0]!.state).toBe('failed');
    expect((await domainOfWorkspace(store.db, ws))!.nextAttemptAt).toBe(clock.now() + backoffMs(n + 1));

    // Reachable: issued, and due again when a third of the lifetime is left.
    dns.setA(PUBLIC, ['127.0.0.1']);
    clock.advance(backoffMs(n + 1));
    expect(await j.runOnce()).toEqual([{ host, state: 'active', reason: null }]);
    row = (await domainOfWorkspace(store.db, ws))!;
    expect(row.attempts).toBe(0);
    expect(row.nextAttemptAt).toBe(renewAt(row.notBefore!, row.notAfter!));

    // Sealed to its host and workspace: the pair opens for this host only, and names it.
    const pair = await openCertificate(vault, ws, host, row.sealedCert!);
    expect(pair.keyPem).toContain('PRIVATE KEY');
    expect(leafValidity(pair.certPem, host)).toEqual({ notBefore: row.notBefore, notAfter: row.notAfter });
    await expect(openCertificate(vault, ws, 'other.shop.test', row.sealedCert!)).rejects.toThrow(/failed to decrypt/);
    expect(() => leafValidity(pair.certPem, 'other.shop.test')).toThrow(/does not name it/);

    // Not before that instant; at it, a new certificate.
    clock.advanceTo(row.nextAttemptAt - 1);
    expect(await j.runOnce()).toEqual([]);
    clock.advanceTo(row.nextAttemptAt);
    expect(await j.runOnce()).toEqual([{ host, state: 'active', reason: null }]);
    const renewed = (await domainOfWorkspace(store.db, ws))!;
    expect(renewed.certVersion).toBe(row.certVersion + 1);

    // A renewal that fails keeps serving the valid certificate (renewing, with the reason)…
    dns.setCname(host, null);
    clock.advanceTo(renewed.nextAttemptAt);
    out = await j.runOnce();
    expect(out).toEqual([{ host, state: 'renewing', reason: expect.stringContaining('has no CNAME record yet') }]);
    // …until the certificate's end: then the host is failed, and links stop using it.
    clock.advanceTo(renewed.notAfter!);
    expect(await j.runOnce()).toEqual([{ host, state: 'failed', reason: expect.stringContaining('expired before it could be renewed') }]);
  });

  it('answers a challenge only for its token on its host, while it is in flight', async () => {
    const token = 'A'.repeat(43);
    await putChallenge(store.db, { token, keyAuthorization: `${token}.thumb`, host: 'a.shop.test', expiresAt: clock.now() + 60_000 });
    const ask = (path: string, host: string) => web.inject({ method: 'GET', url: path, headers: { host } });
    const ok = await ask(`/.well-known/acme-challenge/${token}`, 'a.shop.test:80');
    expect([ok.statusCode, ok.body]).toEqual([200, `${token}.thumb`]);
    expect((await ask(`/.well-known/acme-challenge/${token}`, 'b.shop.test')).statusCode).toBe(404);
    expect((await ask('/.well-known/acme-challenge/not%20a%20token', 'a.shop.test')).statusCode).toBe(404);
    clock.advance(60_000);
    expect((await ask(`/.well-known/acme-challenge/${token}`, 'a.shop.test')).statusCode).toBe(404);
  });

  it('after a master key change, registers a new ACME account instead of failing every issuance', async () => {
    const before = (await acmeAccount(store.db, pebble.directoryUrl))!;
    expect(before.accountUrl).toMatch(/^https:/);
    dns.setCname('rotated.shop.test', PUBLIC);
    dns.setA(PUBLIC, ['127.0.0.1']);
    const other = localKeyWrapper(Buffer.alloc(32, 9));
    const issuer = new AcmeIssuer({ db: store.db, wrapper: other, clock, settings: { directoryUrl: pebble.directoryUrl, directoryCa: pebble.directoryCa, pollMinMs: 100, pollAttempts: 5 } });
    const pair = await issuer.issue('rotated.shop.test');
    expect(leafValidity(pair.certPem, 'rotated.shop.test').notAfter).toBeGreaterThan(Date.now());
    const after = (await acmeAccount(store.db, pebble.directoryUrl))!;
    expect(after.accountUrl).toMatch(/^https:/);
    expect(after.accountUrl).not.toBe(before.accountUrl);
    expect(() => other.unwrap(after.wrappedKey, `acme-account:${pebble.directoryUrl}`)).not.toThrow();
  });

  it('one process at a time: a pass finds the lease held by another and does nothing', async () => {
    clock.advance(7 * 3_600_000);
    const held = await new Leases(store, clock).acquire('tracking-domains', 'p2', 60_000);
    expect(held).not.toBeNull();
    expect(await job('p1').runOnce()).toEqual([]);
    await new Leases(store, clock).release(held!);
    expect((await job('p1').runOnce()).length).toBe(1);
  });
});

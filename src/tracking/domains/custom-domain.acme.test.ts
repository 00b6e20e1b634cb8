import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../app/app.ts';
import { rotateMasterKey } from '../../cli/commands/keys.ts';
import { systemClock } from '../../common/clock.ts';
import { createLogger } from '../../common/logger.ts';
import { readMasterKey } from '../../common/secrets.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { Leases } from '../../ops/leases.ts';
import { trackingKey, trackingLinks } from '../../sending/compose/tracking.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { freePorts, pebbleHostSettings, pebbleInstalled, startPebble, type Pebble } from '../../../test/acme/pebble.ts';
import { accountKeyContext } from './account-keys.ts';
import { AcmeIssuer } from './acme-issuer.ts';
import { CertificateBook } from './certificate-book.ts';
import { dnsResolver } from './cname-check.ts';
import { DomainJob } from './domain-job.ts';
import { acmeAccount } from './sql/acme.ts';
import { domainOfWorkspace, makeDue, setDomain } from './sql/tracking-domain.ts';

/**
 * End to end against Pebble on loopback: a workspace's host is set, its CNAME published in the
 * test's DNS server, verified, a certificate issued over a real HTTP-01 validation (Pebble fetches
 * the token from the app's port), then the pixel and a click fetched over HTTPS with SNI for that
 * host, verified against Pebble's issuing root; a forced renewal is served without a restart; after
 * a master key rotation the certificate still loads and renewal keeps the same ACME account.
 * Pebble is installed by .ci/run; without it (a developer's machine) the file is skipped.
 */
const HOST = 'track.customer.test';
const PUBLIC_HOST = 'cadenza.test';

describe.skipIf(!pebbleInstalled() && !process.env.CI)('custom tracking domain with Pebble', () => {
  let dns: TestDnsServer;
  let pebble: Pebble;
  let app: RunningApp;
  let dir: string;
  let workspaceId: string;
  let root: string;

  beforeAll(async () => {
    dns = await startTestDnsServer();
    const [port] = await freePorts(1);
    pebble = await startPebble({ dnsServer: dns.address, httpPort: port! });
    dir = mkdtempSync(join(tmpdir(), 'cadenza-acme-'));
    app = await startApp({
      dataDir: dir,
      port: port!,
      host: '127.0.0.1',
      roles: ['api'],
      log: createLogger({ level: 'silent' }),
      // The test drives the job and relies on the book's refresh after an issuance, not its timer.
      trackingDomains: pebbleHostSettings(pebble, dns.address, PUBLIC_HOST),
    });
    workspaceId = (await app.store.db.selectFrom('workspace').select('id').executeTakeFirstOrThrow()).id;
    root = await pebble.issuingRoot();
  });

  afterAll(async () => {
    await app?.stop();
    await pebble?.close();
    await dns?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the CNAME, issues, serves tracking over SNI, and renews without a restart', async () => {
    const db = app.store.db;
    const job = app.customHosts!.job;
    const clock = () => Date.now();
    expect(await setDomain(db, workspaceId, HOST, clock())).toBe('set');

    // No CNAME yet: pending, with what to do in words.
    let out = await job.runOnce();
    expect(out).toEqual([{ host: HOST, state: 'pending_dns', reason: expect.stringContaining(`CNAME ${PUBLIC_HOST}.`) }]);

    dns.setCname(HOST, PUBLIC_HOST);
    dns.setA(PUBLIC_HOST, ['127.0.0.1']);
    await makeDue(db, workspaceId, clock());
    out = await job.runOnce();
    expect(out).toEqual([{ host: HOST, state: 'active', reason: null }]);
    const first = (await domainOfWorkspace(db, workspaceId))!;
    expect(first.state).toBe('active');
    // Sealed: neither the key nor the certificate is readable in the row.
    expect(first.sealedCert!.toString('latin1')).not.toContain('BEGIN');
    expect(first.notAfter! - first.notBefore!).toBeGreaterThan(0);
    await app.customHosts!.book.refresh();

    const master = readMasterKey({ dataDir: dir })!;
    const links = trackingLinks({ key: trackingKey(master), baseUrl: `https://${HOST}`, workspaceId, sendRequestId: '0190f0f0-0000-7000-8000-000000000001' });
    const httpsPort = app.trackingHttpsPort!;
    const pixel = await get(httpsPort, HOST, new URL(links.pixelUrl()).pathname, root);
    expect(pixel.status).toBe(200);
    expect(pixel.headers['content-type']).toBe('image/gif');
    const click = await get(httpsPort, HOST, new URL(links.clickUrl('https://example.com/pricing', 0)!).pathname, root);
    expect(click.status).toBe(302);
    expect(click.headers.location).toBe('https://example.com/pricing');
    // Only tracking answers on the customer's name: not the API, not the web app, on either port.
    expect((await get(httpsPort, HOST, '/healthz', root)).status).toBe(404);
    expect(await plainStatus(app.url!, '/healthz', HOST)).toBe(404);
    expect(await plainStatus(app.url!, '/healthz', '127.0.0.1')).toBe(200);
    // A name without a certificate gets no handshake.
    await expect(get(httpsPort, 'other.customer.test', '/t/o/x.gif', root)).rejects.toThrow();

    // A forced renewal: a new certificate, served on the next connection, same process.
    await makeDue(db, workspaceId, clock());
    out = await job.runOnce();
    expect(out).toEqual([{ host: HOST, state: 'active', reason: null }]);
    const second = (await domainOfWorkspace(db, workspaceId))!;
    expect(second.certVersion).toBeGreaterThan(first.certVersion);
    await app.customHosts!.book.refresh();
    const again = await get(httpsPort, HOST, new URL(links.pixelUrl()).pathname, root);
    expect(again.status).toBe(200);
    expect(again.cert.serialNumber).not.toBe(pixel.cert.serialNumber);
    expect(again.cert.subjectaltname).toBe(`DNS:${HOST}`);
  });

  // After the test above: the host is active, the account registered.
  it('after `cadenza keys rotate`, loads the stored certificate and renews with the same ACME account', async () => {
    const db = app.store.db;
    const current = readMasterKey({ dataDir: dir })!;
    const next = randomBytes(32);
    const account = (await acmeAccount(db, pebble.directoryUrl))!;
    expect(account.accountUrl).toMatch(/^https:/);
    const rotated = await rotateMasterKey(app.store, current, next);
    expect(rotated.acmeAccounts).toEqual({ rewrapped: 1, unreadable: [] });

    // A process started with the new key: the book loads the certificate stored before the rotation.
    const vault = new Vault(app.store, localKeyWrapper(next));
    const book = new CertificateBook({ db, vault, clock: systemClock });
    await book.refresh();
    expect(book.hosts()).toEqual([HOST]);

    // Its job renews through Pebble with the rewrapped account key: no new registration.
    const job = new DomainJob({
      db,
      leases: new Leases(app.store, systemClock),
      owner: 'rotated',
      clock: systemClock,
      resolver: dnsResolver([dns.address]),
      publicHost: PUBLIC_HOST,
      issuer: new AcmeIssuer({ db, wrapper: localKeyWrapper(next), settings: { directoryUrl: pebble.directoryUrl, directoryCa: pebble.directoryCa, pollMinMs: 100 }, clock: systemClock }),
      vault,
    });
    const before = (await domainOfWorkspace(db, workspaceId))!;
    await makeDue(db, workspaceId, Date.now());
    expect(await job.runOnce()).toEqual([{ host: HOST, state: 'active', reason: null }]);
    const after = (await domainOfWorkspace(db, workspaceId))!;
    expect(after.certVersion).toBeGreaterThan(before.certVersion);
    const still = (await acmeAccount(db, pebble.directoryUrl))!;
    expect(still.accountUrl).toBe(account.accountUrl);
    expect(localKeyWrapper(next).unwrap(still.wrappedKey, accountKeyContext(pebble.directoryUrl))).toEqual(localKeyWrapper(current).unwrap(account.wrappedKey, accountKeyContext(pebble.directoryUrl)));
    await book.refresh();
    expect(book.hosts()).toEqual([HOST]);
    book.close();
  });
});

/** A GET over HTTPS to 127.0.0.1 naming `host` in SNI and Host, trusting only `ca`. */
function get(port: number, host: string, path: string, ca: string): Promise<{ status: number; headers: IncomingMessage['headers']; cert: PeerCertificate }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, servername: host, headers: { host }, ca, agent: false, timeout: 5000 }, (res) => {
      const cert = (res.socket as TLSSocket).getPeerCertificate();
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, cert }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** The status of a GET on the app's plain HTTP port with this Host (fetch does not let a caller set Host). */
function plainStatus(base: string, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(base);
    const req = httpRequest({ host: u.hostname, port: u.port, path, headers: { host }, agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

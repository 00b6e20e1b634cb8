import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { get } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppOptions } from '../../src/app/app.ts';

/**
 * Pebble, Let's Encrypt's ACME test server (Debian package `pebble`, installed by .ci/run), on
 * loopback for one test: its directory and management ports free ones, its TLS certificate from a
 * CA made here with openssl (the directory's CA, which the client under test is given: TLS checks
 * stay on), its DNS the test's own server (-dnsserver), and its HTTP-01 validation sent to the
 * port where the test's app answers challenges (httpPort). Validation is real
 * (PEBBLE_VA_ALWAYS_VALID=0) and without Pebble's random sleeps (PEBBLE_VA_NOSLEEP=1); nonces are
 * never rejected at random and authorizations never reused, so each issuance is validated again.
 */
export interface Pebble {
  directoryUrl: string;
  /** PEM of the CA that signed Pebble's own TLS certificate (for the ACME client). */
  directoryCa: string;
  /** PEM of Pebble's issuing root, from its management interface (/roots/0), to verify what it issued. */
  issuingRoot(): Promise<string>;
  close(): Promise<void>;
}

export function pebbleInstalled(): boolean {
  try {
    execFileSync('pebble', ['-h'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    // `pebble -h` exits 2 after printing its usage; only a missing binary is ENOENT.
    return (e as { code?: string }).code !== 'ENOENT';
  }
}

export async function startPebble(o: { dnsServer: string; httpPort: number }): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-pebble-'));
  const f = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  // A one-day CA and a certificate for 127.0.0.1 and localhost signed by it.
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '1', '-subj', '/CN=cadenza test pebble tls ca');
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', f('key.pem'), '-out', f('tls.csr'), '-subj', '/CN=localhost');
  writeFileSync(f('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', f('tls.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('cert.pem'), '-days', '1', '-extfile', f('ext.cnf'));
  const [acmePort, mgmtPort, tlsPort] = await freePorts(3);
  writeFileSync(
    f('pebble.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${mgmtPort}`,
        certificate: f('cert.pem'),
        privateKey: f('key.pem'),
        httpPort: o.httpPort,
        // TLS-ALPN-01 is not used; a free port so that nothing else is ever reached.
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    }),
  );
  const child: ChildProcess = spawn('pebble', ['-config', f('pebble.json'), '-dnsserver', o.dnsServer, '-strict=false'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PEBBLE_VA_NOSLEEP: '1', PEBBLE_VA_ALWAYS_VALID: '0', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ca = readFileSync(f('ca.pem'), 'utf8');
  const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  const close = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  // Ready when the directory answers over TLS with our CA (Pebble generates its keys first).
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await fetchText(directoryUrl, ca);
      break;
    } catch (e) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await close();
        throw new Error(`pebble did not start: ${(e as Error).message}\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    directoryUrl,
    directoryCa: ca,
    issuingRoot: () => fetchText(`https://127.0.0.1:${mgmtPort}/roots/0`, ca),
    close,
  };
}

export function fetchText(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get(url, { ca, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: HTTP ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: timeout`)));
    req.on('error', reject);
  });
}

/** Free loopback ports now (the caller binds them soon after: a test's ports, not a guarantee). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => resolve(s));
    })),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/**
 * The app's custom-host settings for a test against this Pebble and the test's DNS server: the
 * HTTPS listener on a free loopback port, and timers an hour long, so that the test drives the
 * domain job and refreshes the certificate book itself.
 */
export function pebbleHostSettings(pebble: Pebble, dnsServer: string, publicHost: string): NonNullable<AppOptions['trackingDomains']> {
  return {
    httpsPort: 0,
    httpsHost: '127.0.0.1',
    publicHost,
    acme: { directoryUrl: pebble.directoryUrl, directoryCa: pebble.directoryCa, pollMinMs: 100 },
    dnsServers: [dnsServer],
    jobEveryMs: 3_600_000,
    bookEveryMs: 3_600_000,
  };
}

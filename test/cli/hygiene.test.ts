import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDnsServer, type TestDnsServer } from '../dns-server.ts';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/**
 * `cadenza import` checks the addresses it writes on the DNS server CADENZA_DNS_RESOLVER names (the
 * local one here; asynchronous spawn, so this process's DNS server can answer meanwhile).
 */
describe('cadenza import with list hygiene', { timeout: 120_000 }, () => {
  let dir: string;
  let dns: TestDnsServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-hygiene-'));
    dns = await startTestDnsServer();
    dns.setMx('acme.test', [{ exchange: 'mx.acme.test', priority: 10 }]);
    dns.setMx('closed.test', [{ exchange: '.', priority: 0 }]);
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await dns.close();
  });

  it('counts the written leads by verdict', async () => {
    writeFileSync(join(dir, 'leads.csv'), 'email\nann@acme.test\nsales@acme.test\nbob@closed.test\ncy@gone.test\n');
    const env = { ...process.env, CADENZA_LIST_HYGIENE: 'on', CADENZA_DNS_RESOLVER: dns.address };
    const r = await run(process.execPath, [join(root, 'bin', 'cadenza.js'), '--data-dir', join(dir, 'data'), '--json', 'import', 'leads.csv'], { cwd: dir, env, encoding: 'utf8' });
    expect(JSON.parse(r.stdout)).toMatchObject({ imported: 4, hygiene: { valid: 1, risky: 1, invalid: 2 } });
    expect(dns.queries.some((q) => q.name === 'closed.test' && q.type === 'MX')).toBe(true);
  });
});

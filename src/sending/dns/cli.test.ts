import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { register } from '../../cli/commands/dns.ts';
import { reportError } from '../../cli/context.ts';
import { generateDkimKey } from '../compose/dkim.ts';
import { sendingRecords } from './records.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';

/**
 * `cadenza dns` run as main.ts runs it (commander, the same global --json option, errors through
 * reportError), in-process with stdout captured, against a DNS server on loopback.
 */
async function cadenza(args: string[]): Promise<{ code: number; stdout: string; stderr: string; json: () => any }> {
  const program = new Command('cadenza').option('--json').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  register(program);
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((stdout += String(s)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
  let code = 0;
  try {
    process.exitCode = undefined;
    await program.parseAsync(['node', 'cadenza', ...args]);
    code = Number(process.exitCode ?? 0);
  } catch (e) {
    code = reportError(e, args.includes('--json'));
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = undefined;
  }
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

describe('cadenza dns', () => {
  let dns: TestDnsServer;
  let dir: string;
  const key = generateDkimKey();
  beforeAll(async () => {
    dns = await startTestDnsServer();
    dir = mkdtempSync(join(tmpdir(), 'cadenza-dns-'));
    writeFileSync(join(dir, 'dkim.pem'), key.privateKeyPem);
  });
  afterAll(async () => {
    await dns.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    process.exitCode = undefined;
  });

  it('prints the three records to publish', async () => {
    const r = await cadenza(['dns', 'acme.test', '--relay-host', 'spf.relay.test', '--dkim-key', join(dir, 'dkim.pem'), '--selector', 's1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('SPF    acme.test\n       v=spf1 include:spf.relay.test ~all');
    expect(r.stdout).toMatch(/DKIM {3}s1\._domainkey\.acme\.test\n {7}v=DKIM1; k=rsa; p=MIIB/);
    expect(r.stdout).toMatch(/in a zone file write "v=DKIM1; k=rsa; p=[^"]{200,}" "[^"]+"/);
    expect(r.stdout).toContain('DMARC  _dmarc.acme.test\n       v=DMARC1; p=none; rua=mailto:dmarc@acme.test');
    expect(r.stdout).not.toContain('Published for');
  });

  it('--check --json reports each record; exit 0 only when all match', async () => {
    const plan = sendingRecords({ domain: 'acme.test', relayIps: ['192.0.2.1'], dkimKey: key.privateKeyPem });
    const args = ['--json', 'dns', 'acme.test', '--relay-ip', '192.0.2.1', '--dkim-key', join(dir, 'dkim.pem'), '--check', '--resolver', dns.address, '--timeout', '2000'];
    dns.setTxt('acme.test', ['v=spf1 ip4:192.0.2.1 ~all']);
    const partial = await cadenza(args);
    expect(partial.code).toBe(1);
    expect(partial.json()).toMatchObject({
      domain: 'acme.test',
      selector: 'cadenza',
      ok: false,
      check: [
        { kind: 'spf', status: 'matches' },
        { kind: 'dkim', status: 'missing' },
        { kind: 'dmarc', status: 'missing' },
      ],
    });
    for (const rec of plan.records) dns.setTxt(rec.name, [rec.value]);
    const all = await cadenza(args);
    expect(all.code).toBe(0);
    expect(all.json().check.map((c: { status: string }) => c.status)).toEqual(['matches', 'matches', 'matches']);
  });

  it('--check in words: the differences and what to publish', async () => {
    dns.setTxt('beta.test', ['v=spf1 include:_spf.google.com ~all']);
    const r = await cadenza(['dns', 'beta.test', '--relay-host', 'spf.relay.test', '--check', '--resolver', dns.address]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('SPF    differs   beta.test');
    expect(r.stdout).toContain("         - does not name the relay: 'include:spf.relay.test' is missing");
    expect(r.stdout).toContain('         publish: v=spf1 include:_spf.google.com include:spf.relay.test ~all');
    expect(r.stdout).toContain('DKIM   missing   cadenza._domainkey.beta.test');
    expect(r.stdout).toContain('DMARC  missing   _dmarc.beta.test\n         publish: v=DMARC1; p=none; rua=mailto:dmarc@beta.test');
    expect(r.stdout).toContain('Not all records match');
  });

  it('--check reports MX (a null MX named) and the blocklists given: a listing fails the check, a refused query does not', async () => {
    const plan = sendingRecords({ domain: 'listed.test', relayIps: ['192.0.2.1'], dkimKey: key.privateKeyPem });
    for (const rec of plan.records) dns.setTxt(rec.name, [rec.value]);
    dns.setMx('listed.test', [{ exchange: 'mx.listed.test', priority: 10 }]);
    dns.setA('mx.listed.test', ['192.0.2.25']);
    dns.setA('25.2.0.192.ip.bl.test', ['127.255.255.254']);
    const args = ['dns', 'listed.test', '--relay-ip', '192.0.2.1', '--dkim-key', join(dir, 'dkim.pem'), '--check', '--resolver', dns.address, '--blocklist', 'ip.bl.test', '--domain-blocklist', 'dbl.bl.test'];
    const clean = await cadenza(['--json', ...args]);
    expect(clean.code).toBe(0);
    expect(clean.json()).toMatchObject({ ok: true, mx: { status: 'ok', published: ['10 mx.listed.test'] } });
    expect(clean.json().blocklists.map((b: { zone: string; status: string }) => `${b.zone}:${b.status}`).sort()).toEqual(['dbl.bl.test:ok', 'ip.bl.test:refused']);
    dns.setA('listed.test.dbl.bl.test', ['127.0.1.2']);
    const listed = await cadenza(args);
    expect(listed.code).toBe(1);
    expect(listed.stdout).toContain('LIST   listed    listed.test on dbl.bl.test\n         - listed.test is listed on dbl.bl.test: DBL: a spam domain');
    expect(listed.stdout).toMatch(/LIST {3}refused {3}192\.0\.2\.25 on ip\.bl\.test\n {9}- the list refused the query: it came through a public or open resolver/);
    dns.setMx('nomail.test', [{ exchange: '.', priority: 0 }]);
    const nullMx = await cadenza(['dns', 'nomail.test', '--check', '--resolver', dns.address]);
    expect(nullMx.stdout).toContain('MX     differs   nomail.test\n         found:   0 .\n         - null MX (RFC 7505)');
    const bad = await cadenza([...args, '--blocklist', 'not a zone']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--blocklist: 'not a zone' is not a DNS zone name/);
  });

  it('--generate-key writes a new private key (mode 0600) and never overwrites one', async () => {
    const file = join(dir, 'new.pem');
    const r = await cadenza(['--json', 'dns', 'gamma.test', '--generate-key', file]);
    expect(r.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const expected = sendingRecords({ domain: 'gamma.test', dkimKey: readFileSync(file, 'utf8') }).records.find((x) => x.kind === 'dkim')!.value;
    expect(r.json().records.find((x: { kind: string }) => x.kind === 'dkim').value).toBe(expected);
    const again = await cadenza(['dns', 'gamma.test', '--generate-key', file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists; use --dkim-key/);
  });

  it('answers bad input with a clear error and exit code 2, and leaves no key behind', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['dns', 'not a domain'], /domain 'not a domain' is not a domain name/],
      [['dns', 'acme.test', '--dkim-key', join(dir, 'missing.pem')], /cannot read DKIM key .*ENOENT/],
      [['dns', 'acme.test', '--relay-ip', 'ten.0.0.1'], /not an IPv4 or IPv6 address/],
      [['dns', 'acme.test', '--check', '--resolver', 'dns.example:53', '--generate-key', join(dir, 'never.pem')], /must be an IP address/],
      [['dns', 'acme.test', '--timeout', 'soon', '--check'], /--timeout is milliseconds/],
      [['dns', 'acme.test', '--dkim-key', join(dir, 'dkim.pem'), '--generate-key', join(dir, 'x.pem')], /either --dkim-key or --generate-key/],
    ];
    for (const [args, re] of cases) {
      const r = await cadenza(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(re);
      expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
    }
    expect(existsSync(join(dir, 'never.pem'))).toBe(false);
    const j = await cadenza(['--json', 'dns', 'bad_domain']);
    expect(j.json().error.code).toBe('INVALID_INPUT');
  });
});

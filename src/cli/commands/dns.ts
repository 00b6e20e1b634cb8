import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { cadenzaError } from '../../common/errors.ts';
import { generateDkimKey } from '../../sending/compose/dkim.ts';
import { parseZones } from '../../sending/dns/blocklist.ts';
import { checkRecords, dnsResolver, type DomainResolver, type RecordCheck } from '../../sending/dns/check.ts';
import { checkMailHosts, type DomainCheck } from '../../sending/dns/domain-health.ts';
import { DEFAULT_SELECTOR, sendingRecords, type RecordSpec } from '../../sending/dns/records.ts';
import { globals, output } from '../context.ts';

/**
 * `cadenza dns DOMAIN`: the SPF, DKIM and DMARC records a custom sending domain publishes for
 * Cadenza's relay; with --check, what is published, record by record. With --check the exit code is
 * 0 only when every record matches (and the domain is on none of the blocklists given), so a
 * setup script can wait on it. The checks are the Domains screen's (sending/dns/check.ts and
 * domain-health.ts): MX is reported too, and --blocklist / --domain-blocklist ask those lists.
 */

export interface DnsOptions {
  selector?: string;
  dkimKey?: string;
  generateKey?: string;
  relayHost?: string;
  relayIp?: string[];
  rua?: string;
  check?: boolean;
  resolver?: string;
  timeout?: string;
  /** IP blocklist zones (the MX hosts' addresses are looked up in them). */
  blocklist?: string[];
  /** Domain blocklist zones (the domain is looked up in them). */
  domainBlocklist?: string[];
}

export interface DnsReport {
  domain: string;
  selector: string;
  records: RecordSpec[];
  notes: string[];
  /** The file a new private key was written to (--generate-key). */
  generatedKey?: string;
  check?: RecordCheck[];
  /** With --check: the MX records (a null MX, RFC 7505, is named). */
  mx?: DomainCheck;
  /** With --check and blocklist zones: one check per list and target. */
  blocklists?: DomainCheck[];
  /** With --check: every record matches and no blocklist lists the domain or its mail hosts. */
  ok?: boolean;
}

function readKey(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw cadenzaError('INVALID_INPUT', `cannot read DKIM key ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file });
  }
}

function writeNewKey(file: string): string {
  const { privateKeyPem } = generateDkimKey();
  try {
    // wx: never overwrite a key that may already be published.
    writeFileSync(file, privateKeyPem, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw cadenzaError('INVALID_INPUT', `${file} already exists; use --dkim-key ${file} to publish it, or choose another file`, { file });
    throw cadenzaError('INVALID_INPUT', `cannot write ${file}: ${code ?? (e as Error).message}`, { file });
  }
  return privateKeyPem;
}

/** The command's work without printing: used by the action and by tests. */
export async function runDns(domain: string, o: DnsOptions, resolver?: DomainResolver): Promise<DnsReport> {
  if (o.dkimKey && o.generateKey) throw cadenzaError('INVALID_INPUT', 'give either --dkim-key or --generate-key, not both');
  const timeoutMs = o.timeout === undefined ? 5000 : Number(o.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 60_000) throw cadenzaError('INVALID_INPUT', `--timeout is milliseconds between 1 and 60000, got '${o.timeout}'`);
  const plan = (dkimKey: string | null) => sendingRecords({ domain, selector: o.selector, relayHost: o.relayHost, relayIps: o.relayIp ?? [], rua: o.rua, dkimKey });
  // Every other argument is checked before a key is generated, so a typo leaves no key file behind.
  const resolve = o.check ? (resolver ?? dnsResolver({ ...(o.resolver ? { server: o.resolver } : {}), timeoutMs })) : undefined;
  const blocklists = { ip: parseZones((o.blocklist ?? []).join(','), '--blocklist', 'INVALID_INPUT'), domain: parseZones((o.domainBlocklist ?? []).join(','), '--domain-blocklist', 'INVALID_INPUT') };
  plan(null);
  const key = o.dkimKey ? readKey(o.dkimKey) : o.generateKey ? writeNewKey(o.generateKey) : null;
  const p = plan(key);
  const report: DnsReport = {
    domain: p.domain,
    selector: p.selector,
    records: p.records,
    notes: p.notes,
    ...(o.generateKey ? { generatedKey: o.generateKey } : {}),
  };
  if (resolve) {
    const [check, hosts] = await Promise.all([checkRecords(p, resolve, { ruaGiven: o.rua !== undefined }), checkMailHosts(resolve, p.domain, { blocklists })]);
    report.check = check;
    report.mx = hosts.mx;
    if (hosts.blocklists.length) report.blocklists = hosts.blocklists;
    report.ok = check.every((c) => c.status === 'matches') && hosts.blocklists.every((b) => b.status !== 'listed');
  }
  return report;
}

const label = (k: string) => k.toUpperCase().padEnd(6);

export function formatDns(r: DnsReport): string {
  const lines: string[] = [`TXT records to publish for ${r.domain}:`, ''];
  for (const rec of r.records) {
    lines.push(`${label(rec.kind)} ${rec.name}`, `       ${rec.value}`);
    if (rec.strings.length > 1) lines.push(`       (over 255 characters: in a zone file write ${rec.strings.map((s) => `"${s}"`).join(' ')})`);
  }
  for (const n of r.notes) lines.push(`note: ${n}`);
  if (r.generatedKey) lines.push(`new DKIM private key written to ${r.generatedKey} (keep it secret; it signs the mail)`);
  lines.push('', 'DMARC starts at p=none (reports only); move to quarantine, then reject, once the reports show all your mail passing.');
  if (r.check) {
    lines.push('', `Published for ${r.domain}:`);
    for (const c of r.check) {
      lines.push(`${label(c.kind)} ${c.status.padEnd(8)}  ${c.name}`);
      for (const p of c.published) lines.push(`         found:   ${p}`);
      for (const d of c.differences) lines.push(`         - ${d}`);
      if (c.suggestion) lines.push(`         publish: ${c.suggestion}`);
      else if (c.status === 'missing' && c.expected) lines.push(`         publish: ${c.expected}`);
    }
    if (r.mx) {
      lines.push(`${label('mx')} ${r.mx.status.padEnd(8)}  ${r.mx.name}`);
      for (const p of r.mx.published) lines.push(`         found:   ${p}`);
      for (const d of r.mx.differences) lines.push(`         - ${d}`);
    }
    for (const b of r.blocklists ?? []) {
      lines.push(`${label('list')} ${b.status.padEnd(8)}  ${b.target} on ${b.zone}`);
      for (const d of b.differences) lines.push(`         - ${d}`);
    }
    lines.push('', r.ok ? 'All records match.' : 'Not all records match (DNS changes can take up to the record TTL to show).');
  }
  return lines.join('\n');
}

const collect = (v: string, acc: string[]) => [...acc, v];

/** Registered in main.ts as `register as dns`. */
export function register(program: Command): void {
  program
    .command('dns <domain>')
    .option('--selector <selector>', 'DKIM selector', DEFAULT_SELECTOR)
    .option('--dkim-key <file>', 'PEM key (private or public) to publish in the DKIM record')
    .option('--generate-key <file>', 'write a new RSA 2048 DKIM private key to FILE (mode 0600) and publish it')
    .option('--relay-host <host>', "SPF: the relay's SPF host, published as include:HOST")
    .option('--relay-ip <ip>', 'SPF: an address of the relay, published as ip4:/ip6: (repeatable)', collect, [])
    .option('--rua <address>', 'where DMARC aggregate reports go (default dmarc@DOMAIN)')
    .option('--check', 'look the records up and report each as missing, matches or differs (exit 1 unless all match)')
    .option('--resolver <host:port>', "DNS server to ask, by IP address (default: the system's)")
    .option('--timeout <ms>', 'timeout of each DNS query', '5000')
    .option('--blocklist <zone>', 'with --check: an IP blocklist zone to look the mail hosts up in, e.g. zen.spamhaus.org (repeatable)', collect, [])
    .option('--domain-blocklist <zone>', 'with --check: a domain blocklist zone to look the domain up in, e.g. dbl.spamhaus.org (repeatable)', collect, [])
    .action(async (domain: string, o: DnsOptions, cmd: Command) => {
      const g = globals(cmd);
      const report = await runDns(domain, o);
      output(g, report, () => formatDns(report));
      if (report.check && !report.ok) process.exitCode = 1;
    });
}

import { isIP } from 'node:net';
import { queryBlocklist, type BlocklistZones } from './blocklist.ts';
import { certificateCheck, type CertificateFacts } from './certificate-check.ts';
import { checkRecords, type DomainResolver, type RecordCheck } from './check.ts';
import { DEFAULT_SELECTOR, sendingRecords, splitTxt, type SendingDomainPlan } from './records.ts';

/**
 * The health of one domain, every check in one pass: for a sending domain SPF, DKIM (each
 * selector its mailboxes are signed with), DMARC, MX and its place on DNS blocklists; for the
 * workspace's tracking host, its CNAME and, for a custom host, its certificate. Each check says what was found, what is wrong and the exact
 * record to publish. The SPF/DKIM/DMARC comparison is check.ts's (the `cadenza dns --check` code);
 * this file adds the other record kinds and the verdict. No storage here: domain-monitor.ts stores
 * the result and raises alerts.
 */

export type Provider = 'smtp_imap' | 'gmail' | 'graph';

export type DomainTarget =
  | {
      purpose: 'sending';
      domain: string;
      /** The providers of the domain's mailboxes: they decide the SPF include and DKIM selectors expected. */
      providers: readonly Provider[];
      /** The SMTP hosts of its SMTP mailboxes: the servers its mail leaves from (their IPs go to the IP lists). */
      smtpHosts: readonly string[];
      /**
       * The selector an SMTP mailbox's mail is signed with (workspace setting dkimSelector): the
       * mail host's, or Cadenza's relay's. Unset, DKIM of an SMTP-only domain is 'unchecked':
       * a host's selector cannot be guessed, and calling it missing would be a false alarm.
       */
      selector?: string;
    }
  | {
      purpose: 'tracking';
      /** The workspace's tracking host: its custom host (tracking_domain), or settings.trackingDomain. */
      domain: string;
      /** The host it must be a CNAME of: the public host (CADENZA_PUBLIC_HOST, else the public URL's). */
      cnameTarget: string;
      /** A custom host's certificate as the ACME job left it; absent: TLS is not Cadenza's (settings.trackingDomain). */
      certificate?: CertificateFacts;
    };

export type CheckKind = 'spf' | 'dkim' | 'dmarc' | 'mx' | 'tracking' | 'certificate' | 'blocklist';

/**
 *   ok        as it should be
 *   missing   nothing is published
 *   differs   published, but wrong (differences say how)
 *   listed    on a blocklist
 *   refused   the blocklist refused to answer (not a listing; the check could not be made)
 *   unchecked Cadenza does not know what to look up (an SMTP host's DKIM selector): not a failure
 *   error     the lookup failed (timeout, SERVFAIL): nothing is known
 */
export type CheckStatus = 'ok' | 'missing' | 'differs' | 'listed' | 'refused' | 'unchecked' | 'error';

export interface PublishRecord {
  type: 'TXT' | 'CNAME' | 'MX';
  name: string;
  value: string;
  /** For a value Cadenza cannot know (a provider's DKIM key): where to get it. */
  note?: string;
}

export interface DomainCheck {
  kind: CheckKind;
  /** The DNS name asked. */
  name: string;
  status: CheckStatus;
  published: string[];
  /** What is wrong, or worth knowing, in words. */
  differences: string[];
  /** The exact record to publish (or, for SPF, the merged record), when the check is not ok. */
  publish?: PublishRecord;
  /** Blocklist checks: the list and what was looked up (the domain or an address). */
  zone?: string;
  target?: string;
}

/** broken: at least one check failed; unknown: none failed but some could not be made; ok: all passed. */
export type DomainVerdict = 'ok' | 'broken' | 'unknown';

export interface DomainHealth {
  domain: string;
  purpose: DomainTarget['purpose'];
  verdict: DomainVerdict;
  checks: DomainCheck[];
}

export interface DomainCheckOptions {
  blocklists: BlocklistZones;
  /** At most this many mail host addresses go to the IP lists (default 8): a pass stays bounded. */
  maxAddresses?: number;
  /** The instant of the check (the injected clock's): a tracking certificate's expiry is judged at it. */
  now: number;
}

/**
 * What each provider publishes for a customer's domain (Google Workspace Admin help, "Set up SPF"
 * and "Set up DKIM"; Microsoft 365, "Set up SPF" and "Use DKIM"): the SPF include, the DKIM
 * selectors, and the MX a domain hosted there has.
 */
const PROVIDERS: Record<'gmail' | 'graph', { spf: string; selectors: string[]; dkimNote: string; mx: (domain: string) => string }> = {
  gmail: {
    spf: '_spf.google.com',
    selectors: ['google'],
    dkimNote: 'the key comes from the Google Admin console: Apps › Google Workspace › Gmail › Authenticate email › Generate new record',
    mx: () => '1 smtp.google.com',
  },
  graph: {
    spf: 'spf.protection.outlook.com',
    selectors: ['selector1', 'selector2'],
    dkimNote: 'a CNAME to selectorN-<domain with dashes>._domainkey.<tenant>.onmicrosoft.com: the Microsoft Defender portal › Email authentication › DKIM shows both',
    mx: (domain) => `0 ${domain.replace(/\./g, '-')}.mail.protection.outlook.com`,
  },
};

function statusOf(c: RecordCheck): CheckStatus {
  return c.status === 'matches' || c.status === 'present' ? 'ok' : c.status;
}

/**
 * A DMARC record that lacks only its reports: the same record with rua added, so that fixing it
 * never loosens a policy already at quarantine or reject.
 */
function dmarcWithReports(c: RecordCheck, domain: string): string | undefined {
  if (c.kind !== 'dmarc' || c.published.length !== 1 || c.differences.length !== 1 || !/^no rua=/.test(c.differences[0]!)) return undefined;
  const record = c.published[0]!.trim();
  return `${record.endsWith(';') ? record.slice(0, -1).trimEnd() : record}; rua=mailto:dmarc@${domain}`;
}

/** The record check's answer in this file's terms, with the record to publish. */
function fromRecordCheck(c: RecordCheck, publish: PublishRecord | undefined, domain: string): DomainCheck {
  const status = statusOf(c);
  const value = c.suggestion ?? dmarcWithReports(c, domain) ?? c.expected;
  const out: DomainCheck = { kind: c.kind, name: c.name, status, published: c.published, differences: c.differences };
  if (status !== 'ok' && status !== 'error') {
    if (c.kind !== 'dkim' && value) out.publish = { type: 'TXT', name: c.name, value };
    else if (publish) out.publish = publish;
  }
  return out;
}

/** The plan for a sending domain: SPF naming each provider's include, DMARC with reports to dmarc@. */
function planFor(domain: string, providers: readonly Provider[], selector: string): SendingDomainPlan {
  const base = sendingRecords({ domain, selector });
  const includes = [...new Set(providers.filter((p): p is 'gmail' | 'graph' => p !== 'smtp_imap').map((p) => PROVIDERS[p].spf))];
  const spfMechanisms = includes.map((i) => `include:${i}`);
  if (!spfMechanisms.length) return base;
  const value = `v=spf1 ${spfMechanisms.join(' ')} ~all`;
  return { ...base, spfMechanisms, records: [{ kind: 'spf', name: base.domain, type: 'TXT', value, strings: splitTxt(value) }, ...base.records] };
}

/** The DKIM selectors to look at: the providers' and, for SMTP mailboxes, the one Cadenza signs with. */
function selectorsFor(providers: readonly Provider[], own: string | undefined): Array<{ selector: string; publish: (domain: string) => PublishRecord }> {
  const out: Array<{ selector: string; publish: (domain: string) => PublishRecord }> = [];
  for (const p of new Set(providers)) {
    if (p === 'smtp_imap') {
      if (own === undefined) continue;
      out.push({ selector: own, publish: (d) => ({ type: 'TXT', name: `${own}._domainkey.${d}`, value: 'v=DKIM1; k=rsa; p=<public key>', note: `cadenza dns ${d} --selector ${own} --generate-key FILE prints the record with a new key` }) });
    } else {
      const info = PROVIDERS[p];
      for (const s of info.selectors) {
        out.push({
          selector: s,
          publish: (d) =>
            p === 'graph'
              ? { type: 'CNAME', name: `${s}._domainkey.${d}`, value: `${s}-${d.replace(/\./g, '-')}._domainkey.<tenant>.onmicrosoft.com`, note: info.dkimNote }
              : { type: 'TXT', name: `${s}._domainkey.${d}`, value: 'v=DKIM1; k=rsa; p=<public key>', note: info.dkimNote },
        });
      }
    }
  }
  return out;
}

/** DKIM of SMTP mailboxes whose host's selector the workspace has not given. */
function uncheckedDkim(domain: string): DomainCheck {
  return {
    kind: 'dkim',
    name: `<selector>._domainkey.${domain}`,
    status: 'unchecked',
    published: [],
    differences: [
      "your SMTP mailboxes' mail is signed by their mail host, with a selector Cadenza cannot guess: set it in Settings (DKIM selector) to have it checked; the host's documentation names it, or read s= in the DKIM-Signature of a message you sent",
    ],
  };
}

type Lookup<T> = { ok: true; value: T } | { ok: false; error: string };

/** No such name, or no records of the type: nothing is published ([]); anything else is an error. */
async function ask<T>(q: () => Promise<T[]>): Promise<Lookup<T[]>> {
  try {
    return { ok: true, value: await q() };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') return { ok: true, value: [] };
    return { ok: false, error: `${code ?? 'error'}: ${(e as Error).message}` };
  }
}

const bare = (h: string) => h.toLowerCase().replace(/\.$/, '');

/**
 * MX: where replies to the domain go. None means replies bounce (and some receivers refuse mail
 * from a domain that cannot receive); a null MX (RFC 7505: one record, exchange ".") says so
 * explicitly, which for a sending domain is a mistake worth naming.
 */
async function checkMx(resolver: DomainResolver, domain: string, providers: readonly Provider[]): Promise<{ check: DomainCheck; hosts: string[] }> {
  const r = await ask(() => resolver.resolveMx(domain));
  const hosted = providers.find((p): p is 'gmail' | 'graph' => p !== 'smtp_imap');
  const publish: PublishRecord | undefined = hosted ? { type: 'MX', name: domain, value: PROVIDERS[hosted].mx(domain) } : undefined;
  const base = { kind: 'mx' as const, name: domain };
  if (!r.ok) return { check: { ...base, status: 'error', published: [], differences: [r.error] }, hosts: [] };
  const records = [...r.value].sort((a, b) => a.priority - b.priority);
  const published = records.map((m) => `${m.priority} ${m.exchange === '' ? '.' : m.exchange}`);
  if (records.length === 0) {
    return { check: { ...base, status: 'missing', published, differences: ['no MX record: replies to this domain cannot be delivered'], ...(publish ? { publish } : {}) }, hosts: [] };
  }
  if (records.some((m) => bare(m.exchange) === '')) {
    return {
      check: { ...base, status: 'differs', published, differences: ['null MX (RFC 7505): the domain declares it accepts no mail, so every reply bounces and many receivers refuse its mail'], ...(publish ? { publish } : {}) },
      hosts: [],
    };
  }
  return { check: { ...base, status: 'ok', published, differences: [] }, hosts: records.map((m) => bare(m.exchange)) };
}

/** The tracking host must be a CNAME of Cadenza's public host, so links and their TLS certificate reach this server. */
async function checkTracking(resolver: DomainResolver, host: string, target: string): Promise<DomainCheck> {
  const want = bare(target);
  const publish: PublishRecord = { type: 'CNAME', name: host, value: want };
  const r = await ask(() => resolver.resolveCname(host));
  const base = { kind: 'tracking' as const, name: host };
  if (!r.ok) return { ...base, status: 'error', published: [], differences: [r.error] };
  const published = r.value.map(bare);
  if (published.length === 0) return { ...base, status: 'missing', published, differences: [`no CNAME: tracking links to ${host} will not reach this server`], publish };
  if (!published.includes(want)) return { ...base, status: 'differs', published, differences: [`points to ${published.join(', ')}, not to ${want}`], publish };
  return { ...base, status: 'ok', published, differences: [] };
}

/** The addresses of the mail hosts, at most `max` (each costs a query per IP list). */
async function addressesOf(resolver: DomainResolver, hosts: readonly string[], max: number): Promise<string[]> {
  const out = new Set<string>();
  const answers = await Promise.all(
    [...new Set(hosts)].map(async (h) => {
      if (isIP(h)) return [h];
      const [v4, v6] = await Promise.all([ask(() => resolver.resolve4(h)), ask(() => resolver.resolve6(h))]);
      return [...(v4.ok ? v4.value : []), ...(v6.ok ? v6.value : [])];
    }),
  );
  for (const a of answers.flat()) if (out.size < max) out.add(a);
  return [...out];
}

async function checkBlocklists(resolver: DomainResolver, domain: string, addresses: readonly string[], zones: BlocklistZones): Promise<DomainCheck[]> {
  const asks = [...zones.domain.map((zone) => ({ target: domain, zone })), ...zones.ip.flatMap((zone) => addresses.map((target) => ({ target, zone })))];
  return Promise.all(
    asks.map(async ({ target, zone }): Promise<DomainCheck> => {
      const v = await queryBlocklist(resolver, target, zone);
      const base = { kind: 'blocklist' as const, name: v.query, zone, target, published: 'codes' in v ? v.codes : [] };
      if (v.status === 'clear') return { ...base, status: 'ok', differences: [] };
      if (v.status === 'error') return { ...base, status: 'error', differences: [v.error] };
      if (v.status === 'refused') return { ...base, status: 'refused', differences: v.meaning };
      return { ...base, status: 'listed', differences: [...v.meaning.map((m) => `${target} is listed on ${zone}: ${m}`), ...(v.reason ? [v.reason] : [])] };
    }),
  );
}

/**
 * MX and the blocklists: where replies go, and whether the domain or its mail hosts (MX hosts and
 * `smtpHosts`) are listed. Shared by checkDomain and `cadenza dns --check`.
 */
export async function checkMailHosts(
  resolver: DomainResolver,
  domain: string,
  o: { providers?: readonly Provider[]; smtpHosts?: readonly string[]; blocklists: BlocklistZones; maxAddresses?: number },
): Promise<{ mx: DomainCheck; blocklists: DomainCheck[] }> {
  const mx = await checkMx(resolver, domain, o.providers ?? []);
  const addresses = o.blocklists.ip.length ? await addressesOf(resolver, [...(o.smtpHosts ?? []), ...mx.hosts], o.maxAddresses ?? 8) : [];
  return { mx: mx.check, blocklists: await checkBlocklists(resolver, domain, addresses, o.blocklists) };
}

/** broken beats unknown beats ok; a refused blocklist query is neither a failure nor a pass. */
export function verdictOf(checks: readonly DomainCheck[]): DomainVerdict {
  if (checks.some((c) => c.status === 'missing' || c.status === 'differs' || c.status === 'listed')) return 'broken';
  if (checks.some((c) => c.status === 'error')) return 'unknown';
  return 'ok';
}

/** Every check of one domain; the lookups run in parallel. */
export async function checkDomain(target: DomainTarget, resolver: DomainResolver, o: DomainCheckOptions): Promise<DomainHealth> {
  if (target.purpose === 'tracking') {
    const checks = [await checkTracking(resolver, target.domain, target.cnameTarget)];
    if (target.certificate) checks.push(certificateCheck(target.domain, target.certificate, o.now));
    return { domain: target.domain, purpose: 'tracking', verdict: verdictOf(checks), checks };
  }
  const selectors = selectorsFor(target.providers, target.selector);
  // An SMTP mailbox whose host's selector is not known: its DKIM cannot be looked up.
  const smtpUnknown = target.providers.includes('smtp_imap') && target.selector === undefined;
  const first = selectors[0]?.selector ?? DEFAULT_SELECTOR;
  const plan = planFor(target.domain, target.providers, first);
  const [records, extraDkim, hosts] = await Promise.all([
    checkRecords(plan, resolver),
    Promise.all(selectors.slice(1).map(async (s) => (await checkRecords({ ...plan, selector: s.selector }, resolver, { kinds: ['dkim'] }))[0]!)),
    checkMailHosts(resolver, plan.domain, { providers: target.providers, smtpHosts: target.smtpHosts, blocklists: o.blocklists, ...(o.maxAddresses ? { maxAddresses: o.maxAddresses } : {}) }),
  ]);
  const fallback = new Map(selectors.map((s) => [`${s.selector}._domainkey.${plan.domain}`, s.publish(plan.domain)]));
  // SMTP mailboxes only: the SPF include is the mail host's own, which Cadenza cannot know.
  fallback.set(plan.domain, { type: 'TXT', name: plan.domain, value: 'v=spf1 include:<your mail host> ~all', note: "your mail host's documentation names its SPF include" });
  const checks: DomainCheck[] = [];
  const dkim = selectors.length ? [records[1]!, ...extraDkim] : [];
  for (const c of [records[0]!, ...dkim]) checks.push(fromRecordCheck(c, fallback.get(c.name), plan.domain));
  if (smtpUnknown) checks.push(uncheckedDkim(plan.domain));
  for (const c of records.slice(2)) checks.push(fromRecordCheck(c, fallback.get(c.name), plan.domain));
  checks.push(hosts.mx, ...hosts.blocklists);
  return { domain: plan.domain, purpose: 'sending', verdict: verdictOf(checks), checks };
}

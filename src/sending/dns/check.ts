import { nodeResolver, type ResolverOptions } from '../../common/dns-resolver.ts';
import { parseTags, type RecordKind, type SendingDomainPlan } from './records.ts';

/**
 * Compares what a sending domain publishes with what it should (records.ts), record by record:
 *
 *   missing   nothing of that kind is published
 *   matches   published, and does what Cadenza needs (an SPF record may name other senders too;
 *             a DMARC policy stricter than p=none is fine)
 *   differs   published, but wrong: each difference is listed, with a corrected record when one
 *             can be computed
 *   present   published, and there is nothing to compare it with (no key or relay was given)
 *   error     the lookup failed (timeout, SERVFAIL): nothing is known
 */

export type CheckStatus = 'missing' | 'matches' | 'differs' | 'present' | 'error';

export interface RecordCheck {
  kind: RecordKind;
  name: string;
  status: CheckStatus;
  /** The record Cadenza suggests (absent when there is nothing to suggest). */
  expected?: string;
  /** The TXT records of this kind found at the name (character-strings joined). */
  published: string[];
  differences: string[];
  /** A corrected record, when the published one can be fixed by a merge (SPF). */
  suggestion?: string;
}

/** The one DNS question the record check asks. The default is node:dns; tests point it at a local server. */
export interface TxtResolver {
  resolveTxt(name: string): Promise<string[][]>;
}

/**
 * Every question the domain health check asks (domain-health.ts): TXT for the records, MX, A and
 * AAAA for the mail hosts and the blocklists, CNAME for the tracking host. One interface, so all of
 * it goes through the one configured server.
 */
export interface DomainResolver extends TxtResolver {
  resolveMx(name: string): Promise<Array<{ exchange: string; priority: number }>>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  resolveCname(name: string): Promise<string[]>;
}

export type { ResolverOptions } from '../../common/dns-resolver.ts';
export { parseResolverAddress } from '../../common/dns-resolver.ts';

export function dnsResolver(o: ResolverOptions = {}): DomainResolver {
  const r = nodeResolver(o);
  return {
    resolveTxt: (name) => r.resolveTxt(name),
    resolveMx: (name) => r.resolveMx(name),
    resolve4: (name) => r.resolve4(name),
    resolve6: (name) => r.resolve6(name),
    resolveCname: (name) => r.resolveCname(name),
  };
}

export type TxtLookup = { ok: true; records: string[] } | { ok: false; error: string };

/** The TXT records at a name, character-strings joined; none when the name or its TXT records do not exist. */
export async function lookupTxt(resolver: TxtResolver, name: string): Promise<TxtLookup> {
  try {
    return { ok: true, records: (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')) };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // No such name, or the name has no TXT records: nothing is published.
    if (code === 'ENOTFOUND' || code === 'ENODATA') return { ok: true, records: [] };
    return { ok: false, error: `${code ?? 'error'}: ${(e as Error).message}` };
  }
}

function checkSpf(plan: SendingDomainPlan, found: string[]): Omit<RecordCheck, 'kind' | 'name'> {
  const expected = plan.records.find((r) => r.kind === 'spf')?.value;
  const published = found.filter((v) => /^v=spf1(\s|$)/i.test(v.trim()));
  const base = { ...(expected ? { expected } : {}), published };
  if (published.length === 0) return { ...base, status: 'missing', differences: [] };
  if (published.length > 1) {
    return { ...base, status: 'differs', differences: [`${published.length} SPF records are published; a domain may have only one (RFC 7208 §3.2: receivers treat this as a permanent error). Merge them into one.`] };
  }
  const terms = published[0]!.trim().split(/\s+/);
  const lower = terms.map((t) => t.toLowerCase());
  const differences: string[] = [];
  const all = lower.find((t) => /^[+?~-]?all$/.test(t));
  if (all === 'all' || all === '+all') differences.push(`'${all}' lets any server send as ${plan.domain}; end the record with ~all or -all`);
  if (plan.spfMechanisms.length === 0) return { ...base, status: differences.length ? 'differs' : 'present', differences };
  const absent = plan.spfMechanisms.filter((m) => !lower.includes(m.toLowerCase()));
  for (const m of absent) differences.push(`does not name the relay: '${m}' is missing`);
  let suggestion: string | undefined;
  if (absent.length) {
    // Keep every sender already named; add the relay's mechanisms before the 'all' (or redirect=) term.
    const end = lower.findIndex((t) => /^[+?~-]?all$/.test(t) || t.startsWith('redirect='));
    const head = end < 0 ? terms : terms.slice(0, end);
    const tail = end < 0 ? ['~all'] : terms.slice(end);
    suggestion = [...head, ...absent, ...tail].join(' ');
  }
  // Terms that cost a DNS lookup at the receiver (RFC 7208 §4.6.4), counted at this level only:
  // includes nest further, so this is a lower bound.
  const querying = (t: string) => /^[+?~-]?(include:|exists:|a$|a[:/]|mx$|mx[:/]|ptr$|ptr:)/.test(t) || t.startsWith('redirect=');
  const lookups = lower.filter(querying).length + absent.filter(querying).length;
  if (lookups > 10) differences.push(`${lookups} terms that each need a DNS lookup; SPF allows at most 10 (RFC 7208 §4.6.4), receivers will answer permerror`);
  return { ...base, status: differences.length ? 'differs' : 'matches', differences, ...(suggestion ? { suggestion } : {}) };
}

const tail = (s: string) => (s.length > 16 ? `…${s.slice(-16)}` : s);

function checkDkim(plan: SendingDomainPlan, found: string[]): Omit<RecordCheck, 'kind' | 'name'> {
  const expected = plan.records.find((r) => r.kind === 'dkim')?.value;
  const published = found.filter((v) => /(^|;)\s*p\s*=/i.test(v));
  const base = { ...(expected ? { expected } : {}), published };
  if (published.length === 0) return { ...base, status: 'missing', differences: [] };
  if (published.length > 1) return { ...base, status: 'differs', differences: [`${published.length} key records at ${plan.selector}._domainkey.${plan.domain}; publish exactly one`] };
  const tags = parseTags(published[0]!);
  const differences: string[] = [];
  const v = tags.get('v');
  if (v !== undefined && v.toUpperCase() !== 'DKIM1') differences.push(`v=${v}: must be DKIM1`);
  const k = tags.get('k');
  if (k !== undefined && k.toLowerCase() !== 'rsa') differences.push(`k=${k}: Cadenza signs with RSA (k=rsa)`);
  const p = (tags.get('p') ?? '').replace(/\s+/g, '');
  if (p === '') differences.push('p= is empty: the key is revoked (RFC 6376 §3.6.1)');
  if (expected) {
    const want = (parseTags(expected).get('p') ?? '').replace(/\s+/g, '');
    if (p !== '' && p !== want) differences.push(`p= is a different public key (published ${tail(p)}, expected ${tail(want)})`);
    return { ...base, status: differences.length ? 'differs' : 'matches', differences };
  }
  return { ...base, status: differences.length ? 'differs' : 'present', differences };
}

function checkDmarc(plan: SendingDomainPlan, found: string[], ruaGiven: boolean): Omit<RecordCheck, 'kind' | 'name'> {
  const expected = plan.records.find((r) => r.kind === 'dmarc')?.value;
  const published = found.filter((v) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(v.trim()));
  const base = { ...(expected ? { expected } : {}), published };
  if (published.length === 0) return { ...base, status: 'missing', differences: [] };
  if (published.length > 1) return { ...base, status: 'differs', differences: [`${published.length} DMARC records; with more than one, receivers apply none (RFC 7489 §6.6.3)`] };
  const tags = parseTags(published[0]!);
  const differences: string[] = [];
  const p = tags.get('p')?.toLowerCase();
  if (p === undefined || !['none', 'quarantine', 'reject'].includes(p)) differences.push(`p=${p ?? '(absent)'}: must be none, quarantine or reject`);
  const rua = tags.get('rua');
  if (!rua) differences.push('no rua=: no aggregate reports will be sent, so failures go unseen');
  else if (ruaGiven && !rua.toLowerCase().split(',').map((s) => s.trim()).includes(`mailto:${plan.rua.toLowerCase()}`)) {
    differences.push(`rua=${rua} does not include mailto:${plan.rua}`);
  }
  return { ...base, status: differences.length ? 'differs' : 'matches', differences };
}

/**
 * Looks up the records and compares each; lookups run in parallel. `kinds` narrows the check (the
 * domain health check asks DKIM alone for a second selector).
 */
export async function checkRecords(plan: SendingDomainPlan, resolver: TxtResolver, opts: { ruaGiven?: boolean; kinds?: RecordKind[] } = {}): Promise<RecordCheck[]> {
  const names: Record<RecordKind, string> = {
    spf: plan.domain,
    dkim: `${plan.selector}._domainkey.${plan.domain}`,
    dmarc: `_dmarc.${plan.domain}`,
  };
  const kinds: RecordKind[] = opts.kinds ?? ['spf', 'dkim', 'dmarc'];
  const results = await Promise.all(kinds.map((k) => lookupTxt(resolver, names[k])));
  return kinds.map((kind, i) => {
    const r = results[i]!;
    const name = names[kind];
    const expected = plan.records.find((x) => x.kind === kind)?.value;
    if (!r.ok) return { kind, name, status: 'error', ...(expected ? { expected } : {}), published: [], differences: [r.error] };
    const c = kind === 'spf' ? checkSpf(plan, r.records) : kind === 'dkim' ? checkDkim(plan, r.records) : checkDmarc(plan, r.records, !!opts.ruaGiven);
    return { kind, name, ...c };
  });
}

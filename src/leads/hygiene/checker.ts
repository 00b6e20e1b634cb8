import type { Clock } from '../../common/clock.ts';
import type { Config } from '../../common/config.ts';
import { nodeResolver, type ResolverOptions } from '../../common/dns-resolver.ts';
import type { Db, Tx } from '../../store/store.ts';
import { leadsToCheck, writeVerdicts, type VerdictRow } from '../sql/hygiene.ts';
import { MailDomainCache, type DomainCacheOptions } from './domain-cache.ts';
import type { MailDomainResolver } from './mail-domain.ts';
import type { HygieneResult, Verdict } from './reasons.ts';
import { decideVerdict, needsDns, parseAddress, type AddressHistory } from './verdict.ts';

export interface HygieneCheckerOptions extends Omit<DomainCacheOptions, 'resolver' | 'clock'> {
  /** DNS questions in flight at once during one batch. Default 16. */
  concurrency?: number;
}

export type VerdictCounts = Record<Verdict, number>;

/**
 * Checks addresses and leads: parse (pure), the domain's DNS status through the shared cache (one
 * per process, so imports and enrollments warm it for each other), then the pure verdict. One
 * checker per process; its resolver is the configured one (CADENZA_DNS_RESOLVER, or the system's).
 */
export class HygieneChecker {
  readonly domains: MailDomainCache;
  private readonly concurrency: number;

  constructor(resolver: MailDomainResolver, readonly clock: Clock, o: HygieneCheckerOptions = {}) {
    this.domains = new MailDomainCache({ ...o, resolver, clock });
    this.concurrency = Math.max(1, o.concurrency ?? 16);
  }

  /** The checker the configuration asks for (CADENZA_LIST_HYGIENE, CADENZA_DNS_RESOLVER), or none when it is off. */
  static fromConfig(cfg: Pick<Config, 'CADENZA_LIST_HYGIENE' | 'CADENZA_DNS_RESOLVER'>, clock: Clock): HygieneChecker | undefined {
    if (cfg.CADENZA_LIST_HYGIENE === 'off') return undefined;
    return HygieneChecker.withResolver(cfg.CADENZA_DNS_RESOLVER ? { server: cfg.CADENZA_DNS_RESOLVER } : {}, clock);
  }

  /** A checker on node:dns pointed at `dns.server` (or the system's resolvers). */
  static withResolver(dns: ResolverOptions, clock: Clock, o: HygieneCheckerOptions = {}): HygieneChecker {
    return new HygieneChecker(nodeResolver({ ...dns, timeoutMs: dns.timeoutMs ?? o.timeoutMs ?? 3000 }), clock, o);
  }

  /** The verdict of each address, in order. `history` by normalised address (bounces, complaints). */
  async checkAddresses(emails: readonly string[], history: ReadonlyMap<string, AddressHistory> = new Map()): Promise<HygieneResult[]> {
    const parsed = emails.map(parseAddress);
    const hist = parsed.map((p) => (p.ok ? (history.get(p.norm) ?? null) : null));
    // The distinct domains to ask, at most `concurrency` at a time: an import of one company's
    // 5,000 people asks once, and a list of 5,000 domains does not open 5,000 sockets.
    const domains = [...new Set(parsed.flatMap((p, i) => (needsDns(p, hist[i]!) ? [p.asciiDomain] : [])))];
    let next = 0;
    const worker = async () => {
      while (next < domains.length) await this.domains.status(domains[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, domains.length) }, worker));
    return Promise.all(parsed.map(async (p, i) => decideVerdict(p, needsDns(p, hist[i]!) ? await this.domains.status(p.asciiDomain) : null, hist[i]!)));
  }

  /**
   * Checks the workspace's leads among `ids` and writes their verdicts; with onlyDue, only
   * those never checked, or risky because DNS did not answer last time (and not decided on). Pass the store, not a transaction: the DNS questions are asked between the
   * read and the write, and a transaction must not wait on them. Returns the counts by verdict.
   */
  async checkLeads(db: Db | Tx, workspaceId: string, ids: readonly string[], o: { onlyDue?: boolean } = {}): Promise<{ counts: VerdictCounts; rows: VerdictRow[] }> {
    const leads = await leadsToCheck(db, workspaceId, ids, o.onlyDue ?? false);
    const history = new Map<string, AddressHistory>();
    for (const l of leads) {
      const p = parseAddress(l.email);
      if (p.ok && l.history) history.set(p.norm, l.history);
    }
    const results = await this.checkAddresses(
      leads.map((l) => l.email),
      history,
    );
    const rows = leads.map((l, i) => ({ id: l.id, verdict: results[i]!.verdict, reasons: results[i]!.reasons }));
    await writeVerdicts(db, workspaceId, rows, new Date(this.clock.now()));
    return { counts: countVerdicts(rows), rows };
  }
}

export function countVerdicts(rows: ReadonlyArray<{ verdict: Verdict }>): VerdictCounts {
  const c: VerdictCounts = { valid: 0, risky: 0, invalid: 0 };
  for (const r of rows) c[r.verdict]++;
  return c;
}

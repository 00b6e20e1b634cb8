import type { Clock } from '../../common/clock.ts';
import { lookupMailDomain, type MailDomainResolver, type MailDomainStatus } from './mail-domain.ts';

export interface DomainCacheOptions {
  resolver: MailDomainResolver;
  clock: Clock;
  /** Each DNS question's limit; a domain not answered in time is 'unknown'. Default 3 s. */
  timeoutMs?: number;
  /** How long a domain that receives mail is remembered. Default 6 h. */
  ttlMs?: number;
  /** How long a domain that does not (NXDOMAIN, null MX, no host) is remembered: shorter, a domain may be set up meanwhile. Default 30 min. */
  negativeTtlMs?: number;
  /**
   * How long an unanswered domain is remembered. Default 60 s: short, so a passing outage is asked
   * again soon; but not zero, so that a dead server costs one timeout per domain per minute, not one
   * per address (an import of 100k rows at one company would otherwise wait 100k timeouts).
   */
  unknownTtlMs?: number;
  /** Entries kept at most; the least recently used goes first. Default 50,000 (a few MB). */
  maxEntries?: number;
}

interface Entry {
  status: MailDomainStatus;
  expiresAt: number;
}

/**
 * What DNS says of each mail domain, cached: TTL by outcome (positive, negative, unknown), bounded
 * in size (LRU: a Map keeps insertion order, a hit moves the entry to the end), and one lookup in
 * flight per domain however many addresses ask at once.
 */
export class MailDomainCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<MailDomainStatus>>();
  private readonly o: Required<Omit<DomainCacheOptions, 'resolver' | 'clock'>>;
  /** Lookups made (not answered from the cache), for tests and the bench. */
  lookups = 0;

  constructor(private readonly deps: DomainCacheOptions) {
    this.o = {
      timeoutMs: deps.timeoutMs ?? 3000,
      ttlMs: deps.ttlMs ?? 6 * 3_600_000,
      negativeTtlMs: deps.negativeTtlMs ?? 30 * 60_000,
      unknownTtlMs: deps.unknownTtlMs ?? 60_000,
      maxEntries: deps.maxEntries ?? 50_000,
    };
  }

  get size(): number {
    return this.entries.size;
  }

  /** The status of an ASCII, lower-case domain. Never rejects. */
  status(domain: string): Promise<MailDomainStatus> {
    const hit = this.entries.get(domain);
    if (hit && hit.expiresAt > this.deps.clock.now()) {
      this.entries.delete(domain);
      this.entries.set(domain, hit);
      return Promise.resolve(hit.status);
    }
    if (hit) this.entries.delete(domain);
    const pending = this.inFlight.get(domain);
    if (pending) return pending;
    this.lookups++;
    const p = lookupMailDomain(this.deps.resolver, this.deps.clock, domain, this.o.timeoutMs)
      .catch((e: unknown): MailDomainStatus => ({ kind: 'unknown', error: (e as Error).message }))
      .then((status) => {
        this.inFlight.delete(domain);
        this.remember(domain, status);
        return status;
      });
    this.inFlight.set(domain, p);
    return p;
  }

  private remember(domain: string, status: MailDomainStatus): void {
    const ttl = status.kind === 'mx' || status.kind === 'implicit_mx' ? this.o.ttlMs : status.kind === 'unknown' ? this.o.unknownTtlMs : this.o.negativeTtlMs;
    if (ttl <= 0 || this.o.maxEntries <= 0) return;
    this.entries.set(domain, { status, expiresAt: this.deps.clock.now() + ttl });
    while (this.entries.size > this.o.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}

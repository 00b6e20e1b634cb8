import type { Clock, TimerHandle } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import { Leases, type Lease } from '../../ops/leases.ts';
import type { Store } from '../../store/store.ts';
import { domainOfWorkspace } from '../../tracking/domains/sql/tracking-domain.ts';
import { workspaceRow } from '../../workspace/workspace-row.ts';
import type { BlocklistZones } from './blocklist.ts';
import type { DomainResolver } from './check.ts';
import { checkDomain, type DomainHealth, type DomainTarget } from './domain-health.ts';
import { normaliseDomain } from './records.ts';
import { domainStatusCounts, forgetDomains, lastChecked, saveDomainHealth, sendingDomainsOf, storedDomainHealth, workspacesWithDomains, type HealthChange } from './sql/domain-health.ts';

/**
 * Keeps each workspace's domain health current: a check now (a person's re-check, through the API)
 * and the daily re-check of every domain, run by the scheduler role. One process does the daily
 * pass: it holds the `domain-health` lease (ops/leases.ts) for the pass and renews it between
 * domains. A change between ok and broken is an alert: saveDomainHealth records it in the check's
 * transaction, and the database turns it into the `domain.health_changed` webhook (0031); the
 * process logs it, and refreshes the gauge.
 */

export interface DomainHealthSettings {
  resolver: DomainResolver;
  blocklists: BlocklistZones;
  /** The host of Cadenza's public URL: a workspace's tracking host must be a CNAME of it. */
  publicHost: string;
}

export interface DomainMonitorDeps {
  store: Store;
  clock: Clock;
  settings: DomainHealthSettings;
  log?: Logger;
  /** This process, as the daily pass's lease owner. */
  owner: string;
  /** A domain is re-checked once it was last checked this long ago (default 24 h). */
  maxAgeMs?: number;
  /** How often the pass looks for domains due (default 1 h). */
  everyMs?: number;
  /** Domains by status after each pass (the Prometheus gauge). */
  onCounts?: (counts: Record<'ok' | 'broken' | 'unknown', number>) => void;
  onChange?: (workspaceId: string, domain: string, change: HealthChange) => void;
}

export const DOMAIN_HEALTH_LEASE = 'domain-health';
const LEASE_TTL_MS = 10 * 60_000;

/**
 * What the workspace's domains are now: its mailboxes' domains, and its tracking hosts: the custom
 * host with its ACME certificate (tracking_domain), and settings.trackingDomain (TLS terminated by
 * the installation's own proxy) when it names another host.
 */
export async function domainTargets(store: Store, workspaceId: string, publicHost: string): Promise<DomainTarget[]> {
  const [ws, custom] = await Promise.all([workspaceRow(store.db, workspaceId), domainOfWorkspace(store.db, workspaceId)]);
  const settings = (ws?.settings ?? {}) as { trackingDomain?: unknown; dkimSelector?: unknown };
  const selector = typeof settings.dkimSelector === 'string' ? settings.dkimSelector : undefined;
  const targets: DomainTarget[] = (await sendingDomainsOf(store.db, workspaceId)).map((d) => ({ purpose: 'sending', domain: d.domain, providers: d.providers, smtpHosts: d.smtpHosts, ...(selector ? { selector } : {}) }));
  if (custom) targets.push({ purpose: 'tracking', domain: custom.host, cnameTarget: publicHost, certificate: { state: custom.state, reason: custom.reason, notAfter: custom.notAfter } });
  const legacy = typeof settings.trackingDomain === 'string' && settings.trackingDomain ? settings.trackingDomain.toLowerCase() : undefined;
  if (legacy && legacy !== custom?.host) targets.push({ purpose: 'tracking', domain: legacy, cnameTarget: publicHost });
  return targets;
}

/** Checks one target and stores the result; answers the health and the change it made, if any. */
export async function checkAndStore(d: Pick<DomainMonitorDeps, 'store' | 'clock' | 'settings' | 'log' | 'onChange'>, workspaceId: string, target: DomainTarget): Promise<{ health: DomainHealth; change: HealthChange | null }> {
  const health = await checkDomain(target, d.settings.resolver, { blocklists: d.settings.blocklists, now: d.clock.now() });
  const change = await saveDomainHealth(d.store.db, workspaceId, health, new Date(d.clock.now()));
  if (change?.alert) {
    const failing = health.checks.filter((c) => c.status !== 'ok' && c.status !== 'error' && c.status !== 'refused' && c.status !== 'unchecked').map((c) => `${c.kind} ${c.status}`);
    d.log?.warn({ workspaceId, domain: health.domain, purpose: health.purpose, from: change.from, to: change.to, failing }, `domain ${health.domain}: ${change.from} → ${change.to}`);
  }
  if (change) d.onChange?.(workspaceId, health.domain, change);
  return { health, change };
}

/**
 * A person's re-check of one domain of their workspace (the API's button). Refuses a domain the
 * workspace does not send from, so the route cannot be used to make this server query any name.
 */
export async function recheckDomain(d: Pick<DomainMonitorDeps, 'store' | 'clock' | 'settings' | 'log' | 'onChange'>, workspaceId: string, domain: string): Promise<{ health: DomainHealth; change: HealthChange | null }> {
  const name = normaliseDomain(domain);
  const target = (await domainTargets(d.store, workspaceId, d.settings.publicHost)).find((t) => t.domain === name);
  if (!target) throw cadenzaError('NOT_FOUND', `${name} is not a domain of this workspace (a mailbox's domain or its tracking host)`, { domain: name });
  return checkAndStore(d, workspaceId, target);
}

export class DomainMonitor {
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  /** stop() was called: a pass in progress ends after the domain in hand. */
  private stopping = false;
  private readonly leases: Leases;

  constructor(private readonly d: DomainMonitorDeps) {
    this.leases = new Leases(d.store, d.clock);
  }

  /** First pass now (domains never checked, or past their age), then every `everyMs`. */
  start(): void {
    this.stopped = false;
    this.stopping = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    this.timer?.cancel();
    this.timer = null;
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.d.clock.setTimer(ms, () => {
      this.running = this.runOnce()
        .catch((e: unknown) => this.d.log?.error({ err: e }, 'domain health pass failed'))
        .then(() => {
          this.running = null;
          this.schedule(this.d.everyMs ?? 3_600_000);
        });
    });
  }

  /**
   * One pass: under the lease, every domain of every workspace checked longer ago than maxAgeMs.
   * Answers how many were checked (0: nothing due, or another process holds the lease).
   */
  async runOnce(): Promise<number> {
    let lease: Lease | null = await this.leases.acquire(DOMAIN_HEALTH_LEASE, this.d.owner, LEASE_TTL_MS);
    if (!lease) return 0;
    let checked = 0;
    try {
      const maxAge = this.d.maxAgeMs ?? 86_400_000;
      for (const workspaceId of await workspacesWithDomains(this.d.store.db)) {
        const targets = await domainTargets(this.d.store, workspaceId, this.d.settings.publicHost);
        await forgetDomains(this.d.store.db, workspaceId, targets);
        const last = await lastChecked(this.d.store.db, workspaceId);
        for (const t of targets) {
          if (this.stopping) return checked;
          const at = last.get(`${t.purpose}:${t.domain}`);
          if (at && this.d.clock.now() - at.getTime() < maxAge) continue;
          await checkAndStore(this.d, workspaceId, t);
          checked++;
          // Lost (a stall past the TTL): another process has the pass now.
          lease = await this.leases.renew(lease, LEASE_TTL_MS);
          if (!lease) return checked;
        }
      }
      if (this.d.onCounts) this.d.onCounts(await domainStatusCounts(this.d.store.db));
      return checked;
    } finally {
      if (lease) await this.leases.release(lease);
    }
  }
}

export interface DomainListEntry {
  domain: string;
  purpose: 'sending' | 'tracking';
  /** null: not checked yet (a mailbox added since the last pass). */
  verdict: 'ok' | 'broken' | 'unknown' | null;
  status: 'ok' | 'broken' | null;
  checks: DomainHealth['checks'];
  checkedAt: Date | null;
  changedAt: Date | null;
}

/** The workspace's domains now (its mailboxes' and its tracking host), each with its last stored check. */
export async function listDomainHealth(store: Store, workspaceId: string, publicHost: string): Promise<DomainListEntry[]> {
  const [targets, stored] = await Promise.all([domainTargets(store, workspaceId, publicHost), storedDomainHealth(store.db, workspaceId)]);
  const by = new Map(stored.map((s) => [`${s.purpose}:${s.domain}`, s]));
  return targets.map((t) => {
    const s = by.get(`${t.purpose}:${t.domain}`);
    return { domain: t.domain, purpose: t.purpose, verdict: s?.verdict ?? null, status: s?.status ?? null, checks: s?.checks ?? [], checkedAt: s?.checkedAt ?? null, changedAt: s?.changedAt ?? null };
  });
}

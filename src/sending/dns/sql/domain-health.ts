import { sql } from 'kysely';
import { inTx, type Conn } from '../../../store/in-tx.ts';
import type { Db } from '../../../store/store.ts';
import type { DomainCheck, DomainHealth, Provider } from '../domain-health.ts';

/**
 * The queries of domain health (0031_domain_health.sql): which domains a workspace sends from,
 * the stored result of each domain's last check, its changes (the alerts), and the counts the
 * Prometheus gauge shows.
 */

export interface SendingDomainRow {
  domain: string;
  providers: Provider[];
  smtpHosts: string[];
}

/** The workspace's sending domains: the domains of its live mailboxes, with their providers and SMTP hosts. */
export async function sendingDomainsOf(db: Db, workspaceId: string): Promise<SendingDomainRow[]> {
  const rows = await db
    .selectFrom('mailbox')
    .select(['email', 'provider', 'settings'])
    .where('workspace_id', '=', workspaceId)
    .where('removed_at', 'is', null)
    .execute();
  const by = new Map<string, { providers: Set<Provider>; smtpHosts: Set<string> }>();
  for (const r of rows) {
    const domain = r.email.slice(r.email.lastIndexOf('@') + 1).toLowerCase();
    if (!domain) continue;
    const d = by.get(domain) ?? { providers: new Set(), smtpHosts: new Set() };
    by.set(domain, d);
    d.providers.add(r.provider);
    const host = (r.settings as { smtp?: { host?: unknown } } | null)?.smtp?.host;
    if (r.provider === 'smtp_imap' && typeof host === 'string' && host) d.smtpHosts.add(host.toLowerCase());
  }
  return [...by.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([domain, d]) => ({ domain, providers: [...d.providers].sort(), smtpHosts: [...d.smtpHosts].sort() }));
}

/** Workspaces with at least one live mailbox or a tracking host (custom or in settings): the daily pass looks at these. */
export async function workspacesWithDomains(db: Db): Promise<string[]> {
  const r = await sql<{ id: string }>`
    select w.id from workspace w
    where exists (select 1 from mailbox m where m.workspace_id = w.id and m.removed_at is null)
       or exists (select 1 from tracking_domain t where t.workspace_id = w.id and t.purpose = 'tracking')
       or w.settings ? 'trackingDomain'
    order by w.id`.execute(db);
  return r.rows.map((x) => x.id);
}

export interface StoredDomainHealth {
  domain: string;
  purpose: 'sending' | 'tracking';
  verdict: 'ok' | 'broken' | 'unknown';
  status: 'ok' | 'broken' | null;
  checks: DomainCheck[];
  checkedAt: Date;
  changedAt: Date | null;
}

export async function storedDomainHealth(db: Db, workspaceId: string): Promise<StoredDomainHealth[]> {
  const rows = await db.selectFrom('domain_health').selectAll().where('workspace_id', '=', workspaceId).orderBy('purpose').orderBy('domain').execute();
  return rows.map((r) => ({ domain: r.domain, purpose: r.purpose, verdict: r.verdict, status: r.status, checks: r.checks as DomainCheck[], checkedAt: r.checked_at, changedAt: r.changed_at }));
}

/** Rows of domains the workspace no longer uses (its last mailbox there removed, the tracking host changed). */
export async function forgetDomains(db: Db, workspaceId: string, keep: ReadonlyArray<{ domain: string; purpose: 'sending' | 'tracking' }>): Promise<void> {
  const keys = keep.map((k) => `${k.purpose}:${k.domain}`);
  await db
    .deleteFrom('domain_health')
    .where('workspace_id', '=', workspaceId)
    .$if(keys.length > 0, (q) => q.where(sql<boolean>`purpose || ':' || domain <> all (${sql.val(keys)}::text[])`))
    .execute();
}

export interface HealthChange {
  from: 'ok' | 'broken' | null;
  to: 'ok' | 'broken';
  /** A change between ok and broken: an alert (webhook, the app's list, the log). */
  alert: boolean;
}

/**
 * Stores a check's result and, when the domain's status changes, the change, in one transaction
 * under the row's lock: two processes storing checks of one domain at once (the daily pass and a
 * person's re-check) record one change, not two. A verdict of `unknown` (lookups failed) keeps the
 * status: an outage of the resolver is not a broken domain.
 */
export async function saveDomainHealth(db: Conn, workspaceId: string, h: DomainHealth, at: Date): Promise<HealthChange | null> {
  return inTx(db, async (tx) => {
    // Insert-or-lock: the row exists (and is locked) after this statement either way.
    await sql`insert into domain_health (workspace_id, domain, purpose, verdict, status, checks, checked_at)
              values (${workspaceId}, ${h.domain}, ${h.purpose}, 'unknown', null, '[]'::jsonb, ${at})
              on conflict do nothing`.execute(tx);
    const old = await tx
      .selectFrom('domain_health')
      .select(['status'])
      .where('workspace_id', '=', workspaceId)
      .where('purpose', '=', h.purpose)
      .where('domain', '=', h.domain)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const status = h.verdict === 'unknown' ? old.status : h.verdict;
    const changed = status !== null && status !== old.status;
    await tx
      .updateTable('domain_health')
      .set({ verdict: h.verdict, status, checks: JSON.stringify(h.checks), checked_at: at, ...(changed ? { changed_at: at } : {}) })
      .where('workspace_id', '=', workspaceId)
      .where('purpose', '=', h.purpose)
      .where('domain', '=', h.domain)
      .execute();
    if (!changed) return null;
    const failing = h.checks.filter((c) => c.status === 'missing' || c.status === 'differs' || c.status === 'listed').map((c) => ({ kind: c.kind, name: c.name, status: c.status, differences: c.differences }));
    await tx
      .insertInto('domain_health_change')
      .values({ workspace_id: workspaceId, domain: h.domain, purpose: h.purpose, from_status: old.status, to_status: status, failing: JSON.stringify(failing), at })
      .execute();
    return { from: old.status, to: status, alert: old.status !== null };
  });
}

/** When each of the workspace's domains was last checked (absent: never). */
export async function lastChecked(db: Db, workspaceId: string): Promise<Map<string, Date>> {
  const rows = await db.selectFrom('domain_health').select(['domain', 'purpose', 'checked_at']).where('workspace_id', '=', workspaceId).execute();
  return new Map(rows.map((r) => [`${r.purpose}:${r.domain}`, r.checked_at]));
}

export interface DomainAlert {
  id: number;
  domain: string;
  purpose: 'sending' | 'tracking';
  from: 'ok' | 'broken';
  to: 'ok' | 'broken';
  failing: Array<{ kind: string; name: string; status: string; differences: string[] }>;
  at: Date;
  seenAt: Date | null;
}

/** The workspace's alerts (changes between ok and broken), newest first. */
export async function domainAlerts(db: Db, workspaceId: string, limit: number): Promise<DomainAlert[]> {
  const rows = await db
    .selectFrom('domain_health_change')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('from_status', 'is not', null)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: Number(r.id), domain: r.domain, purpose: r.purpose, from: r.from_status!, to: r.to_status, failing: r.failing as DomainAlert['failing'], at: r.at, seenAt: r.seen_at }));
}

/** Marks the workspace's alerts up to `upToId` read; returns how many were unread. */
export async function markAlertsSeen(db: Db, workspaceId: string, upToId: number, at: Date): Promise<number> {
  const r = await db
    .updateTable('domain_health_change')
    .set({ seen_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '<=', upToId)
    .where('from_status', 'is not', null)
    .where('seen_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Domains by status, every workspace together: the Prometheus gauge. */
export async function domainStatusCounts(db: Db): Promise<Record<'ok' | 'broken' | 'unknown', number>> {
  const rows = await db.selectFrom('domain_health').select(['status', (eb) => eb.fn.countAll<string>().as('n')]).groupBy('status').execute();
  const out = { ok: 0, broken: 0, unknown: 0 };
  for (const r of rows) out[r.status ?? 'unknown'] += Number(r.n);
  return out;
}

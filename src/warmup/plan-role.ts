/**
 * The periodic planning role: once a day per installation, each pool's day plan. One process
 * plans: it holds the `warmup-plan` lease (ops/leases.ts) for the pass. The plan and its record in
 * warmup_plan_day (sends, shortfall) are written in one transaction, and a pool whose day has a
 * record is not planned again (a restart, the next tick), so a day is planned once, even when its
 * plan is empty.
 *
 * The pool is assembled from the opted-in members' mailboxes as pacing sees them: the working day
 * of today (window), minimum gap, daily cap (ramp and placement cap factor included) less what the
 * mailbox already claimed today and the campaign sends the dispatcher planned for the rest of it,
 * and those planned send times as busy instants, so warmup fits around campaign mail.
 * A paused mailbox or one with invalid pacing settings is left out of today's pool.
 */
import { sql } from 'kysely';
import type { Clock, TimerHandle } from '../common/clock.ts';
import { isCadenzaError } from '../common/errors.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import { MailboxBucket } from '../mailbox/pacing/bucket.ts';
import { blockedReason, toMailboxPacing, type PacedMailboxRow } from '../mailbox/pacing/mailbox.ts';
import { Leases } from '../ops/leases.ts';
import { usageSql } from '../sending/dispatch/sql.ts';
import type { Store } from '../store/store.ts';
import { planWarmupDay } from './plan/planner.ts';
import type { WarmupMember, WarmupPlan } from './plan/types.ts';
import { recentPairs, writeDayPlan } from './plan-store.ts';
import { warmupProvider } from './provider.ts';

const DAY_MS = 86_400_000;
export const WARMUP_PLAN_LEASE = 'warmup-plan';
const LEASE_TTL_MS = 10 * 60_000;

interface MemberRow extends PacedMailboxRow {
  email: string;
  provider: string;
  /** The domain's last domain-health checks (sending/dns): its MX check says where its mail is hosted. */
  domain_checks: unknown;
  pool: string;
  target: number;
  joined_at: Date;
}

// -- name: warmup-pool-members
const membersSql = (pool: string) => sql<MemberRow>`
  select m.id, m.workspace_id, m.email, m.provider, m.daily_cap, m.hourly_cap, m.ramp, m.ramp_started_at, m.created_at, m.time_zone, m.settings,
         m.health, m.health_reason, w.time_zone as ws_zone, w.settings as ws_settings, w.daily_cap as ws_cap,
         wm.cap_factor, wm.cap_reason, wm.pool, wm.target, wm.joined_at, dh.checks as domain_checks
  from warmup_member wm join mailbox m on m.id = wm.mailbox_id join workspace w on w.id = m.workspace_id
  left join domain_health dh on dh.workspace_id = m.workspace_id and dh.purpose = 'sending' and dh.domain = lower(split_part(m.email, '@', 2))
  where wm.pool = ${pool} and m.removed_at is null
  order by m.id`;

// -- name: warmup-member-planned
// Each member's campaign sends the dispatcher planned from `from` on. (Its counted sends, campaign
// and warmup in one bucket, are dispatch's usageSql.)
const plannedSql = (ids: string[], from: number, to: number) => sql<{ mailbox_id: string; send_at: Date }>`
  select mailbox_id, send_at from send_request
  where mailbox_id = any(${ids}::uuid[]) and state = 'queued' and send_at >= ${new Date(from)} and send_at < ${new Date(to)}`;

/**
 * A member's provider label (provider.ts) from its connector, its SMTP/IMAP hosts and its domain's
 * MX: the planner's pool and the federation's offer to peers say the same.
 */
export function memberProvider(r: { provider: string; settings: unknown; domain_checks: unknown }, domain: string): string {
  const settings = (r.settings ?? {}) as { smtp?: { host?: unknown; port?: unknown }; imap?: { host?: unknown; port?: unknown } };
  const endpoint = (e: { host?: unknown; port?: unknown } | undefined) =>
    e && typeof e === 'object' ? { host: typeof e.host === 'string' ? e.host : null, port: typeof e.port === 'number' ? e.port : null } : null;
  return warmupProvider({ kind: r.provider, domain, smtp: endpoint(settings.smtp), imap: endpoint(settings.imap), mx: mxOf(r.domain_checks) }).label;
}

/** The MX exchanges of a stored domain-health check ('10 mx.example.com' each, best first), [] when none. */
function mxOf(checks: unknown): string[] {
  if (!Array.isArray(checks)) return [];
  const mx = checks.find((c): c is { kind: 'mx'; status: string; published: unknown } => !!c && typeof c === 'object' && (c as { kind?: unknown }).kind === 'mx');
  if (!mx || mx.status !== 'ok' || !Array.isArray(mx.published)) return [];
  return mx.published.flatMap((p) => (typeof p === 'string' ? [p.trim().split(/\s+/).pop() ?? ''] : [])).filter((h) => h !== '');
}

/** The pool as the planner sees it at `now` (pure reads; no writes). */
export async function assemblePool(store: Store, pool: string, now: number, log?: Logger): Promise<WarmupMember[]> {
  const rows = (await membersSql(pool).execute(store.db)).rows;
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const counted = group((await usageSql(ids, now - 2 * DAY_MS).execute(store.db)).rows.map((u) => [u.mailbox_id, u.claimed_at.getTime()]));
  const planned = group((await plannedSql(ids, now, now + 2 * DAY_MS).execute(store.db)).rows.map((u) => [u.mailbox_id, u.send_at.getTime()]));
  const out: WarmupMember[] = [];
  for (const r of rows) {
    if (blockedReason(r) !== null) continue;
    let bucket: MailboxBucket;
    try {
      bucket = new MailboxBucket(toMailboxPacing(r, { time_zone: r.ws_zone, settings: r.ws_settings }), counted.get(r.id) ?? []);
    } catch (e) {
      if (!isCadenzaError(e)) throw e;
      log?.warn({ mailboxId: r.id, err: e.message }, 'warmup: mailbox left out of the pool');
      continue;
    }
    const day = bucket.days.dayOf(now);
    const wd = bucket.plan(day);
    // Campaign sends planned for the rest of this local day take their share of the cap first.
    const campaign = (planned.get(r.id) ?? []).filter((t) => bucket.days.dayOf(t) === day);
    const remainingCap = Math.max(0, bucket.cap(day) - bucket.sentOn(day) - campaign.length);
    const start = wd ? Math.min(Math.max(wd.start, now), wd.end) : now;
    const end = wd ? wd.end : now;
    const busy = [...(counted.get(r.id) ?? []).filter((t) => bucket.days.dayOf(t) === day), ...campaign];
    // A lunch break is busy time too: placed as sends at its edges and middle, the gap keeps warmup out of it.
    if (wd?.lunch) for (let t = wd.lunch.start; t <= wd.lunch.end; t += Math.max(1, bucket.mb.pacing.gapMinMs)) busy.push(t);
    const domain = r.email.slice(r.email.lastIndexOf('@') + 1).toLowerCase();
    out.push({
      id: r.id,
      provider: memberProvider(r, domain),
      domain,
      workspace: r.workspace_id,
      canSend: true,
      rampDay: Math.max(0, Math.floor((now - r.joined_at.getTime()) / DAY_MS)),
      target: r.target,
      remainingCap,
      window: { start, end },
      busy: busy.sort((a, b) => a - b),
      minGapMs: bucket.mb.pacing.gapMinMs,
    });
  }
  const locals = new Set(rows.map((r) => r.email.toLowerCase()));
  for (const r of await remoteMembers(store, pool, now)) if (!locals.has(r.id)) out.push(r);
  return out;
}

// -- name: warmup-pool-remote-members
// The members active peers offered this pool, with what we already planned to each today (their
// offered capacity is per UTC day: exchange.ts counts it so on their side).
const remoteSql = (pool: string, dayStart: number) => sql<{ address: string; provider: string; domain: string; capacity: number; peer_id: string; planned: number }>`
  select r.address, r.provider, r.domain, r.capacity, r.peer_id,
         (select count(*)::int from warmup_mail x where x.peer_id = r.peer_id and lower(x.receiver_address) = r.address and x.kind = 'first'
            and x.sender_mailbox_id is not null and x.planned_at >= ${new Date(dayStart)} and x.planned_at < ${new Date(dayStart + DAY_MS)}) as planned
  from warmup_remote_member r join warmup_peer p on p.id = r.peer_id
  where p.pool = ${pool} and p.state = 'active'
  order by r.address`;

/**
 * A peer's member as the planner sees it: a receiver only (no credentials here), of its own
 * workspace label (one per peer), up to the capacity it offered less what is already planned to it today.
 */
async function remoteMembers(store: Store, pool: string, now: number): Promise<Array<WarmupMember & { peerId: string }>> {
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  const seen = new Set<string>();
  const out: Array<WarmupMember & { peerId: string }> = [];
  for (const r of (await remoteSql(pool, dayStart).execute(store.db)).rows) {
    if (seen.has(r.address)) continue; // two peers listing one address: the first keeps it
    seen.add(r.address);
    out.push({ id: r.address, peerId: r.peer_id, provider: r.provider, domain: r.domain, workspace: `peer:${r.peer_id}`, canSend: false, rampDay: 0, target: Math.max(1, r.capacity), remainingCap: 0, window: { start: now, end: now }, busy: [], minGapMs: 0, receiveLimit: Math.max(0, r.capacity - r.planned) });
  }
  return out;
}

function group(pairs: Array<[string, number]>): Map<string, number[]> {
  const m = new Map<string, number[]>();
  for (const [k, v] of pairs) (m.get(k) ?? m.set(k, []).get(k)!).push(v);
  return m;
}

export interface PlanRoleDeps {
  store: Store;
  clock: Clock;
  random: Random;
  /** This process, as the lease owner. */
  owner: string;
  log?: Logger;
  /** How often the role looks whether today is planned (default 1 h). */
  everyMs?: number;
}

export type PoolDay = { pool: string; planned: number; shortfall: WarmupPlan['shortfall'] } | { pool: string; skipped: 'already planned' };

/**
 * Plans today (the UTC day of now) for every pool not yet planned. Null when another process
 * holds the lease.
 */
export async function planWarmupPools(d: PlanRoleDeps): Promise<PoolDay[] | null> {
  const leases = new Leases(d.store, d.clock);
  const lease = await leases.acquire(WARMUP_PLAN_LEASE, d.owner, LEASE_TTL_MS);
  if (!lease) return null;
  try {
    const now = d.clock.now();
    const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
    const pools = (await sql<{ pool: string }>`select distinct pool from warmup_member order by pool`.execute(d.store.db)).rows.map((r) => r.pool);
    const out: PoolDay[] = [];
    for (const pool of pools) {
      const day = new Date(dayStart).toISOString().slice(0, 10);
      const done = await d.store.db.selectFrom('warmup_plan_day').select('day').where('pool', '=', pool).where('day', '=', day).executeTakeFirst();
      if (done) {
        out.push({ pool, skipped: 'already planned' });
        continue;
      }
      const members = await assemblePool(d.store, pool, now, d.log);
      const recent = await recentPairs(d.store.db, pool, dayStart, 7);
      const plan = planWarmupDay({ members, recentPairs: recent }, d.random.fork(`warmup:${pool}:${dayStart}`));
      const addresses = new Map<string, { address: string; mailboxId: string | null; peerId?: string }>((await sql<{ id: string; email: string }>`select m.id, m.email from mailbox m join warmup_member wm on wm.mailbox_id = m.id where wm.pool = ${pool}`.execute(d.store.db)).rows.map((r) => [r.id, { address: r.email, mailboxId: r.id }]));
      for (const m of members) if ('peerId' in m && typeof m.peerId === 'string') addresses.set(m.id, { address: m.id, mailboxId: null, peerId: m.peerId });
      const short = plan.shortfall.filter((s) => s.planned < s.wanted);
      const wrote = await d.store.db.transaction().execute(async (tx) => {
        const mine = await tx
          .insertInto('warmup_plan_day')
          .values({ pool, day, planned_at: new Date(now), sends: plan.sends.length, shortfall: JSON.stringify(short) })
          .onConflict((oc) => oc.columns(['pool', 'day']).doNothing())
          .returning('pool')
          .executeTakeFirst();
        // Another planner's record came first (its lease expired mid-pass): its plan stands.
        if (!mine) return false;
        await writeDayPlan(tx, pool, plan.sends, addresses, d.random);
        return true;
      });
      if (!wrote) {
        out.push({ pool, skipped: 'already planned' });
        continue;
      }
      d.log?.info({ pool, planned: plan.sends.length, short: short.length }, 'warmup day planned');
      out.push({ pool, planned: plan.sends.length, shortfall: plan.shortfall });
    }
    return out;
  } finally {
    await leases.release(lease).catch(() => undefined);
  }
}

/** The role: planWarmupPools now, then every `everyMs`. */
export class WarmupPlanRole {
  private timer: TimerHandle | null = null;
  private stopped = false;
  constructor(private readonly d: PlanRoleDeps) {}

  start(): void {
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      await planWarmupPools(this.d);
    } catch (e) {
      this.d.log?.error({ err: e instanceof Error ? e.message : String(e) }, 'warmup planning failed');
    }
    if (!this.stopped) this.timer = this.d.clock.setTimer(this.d.everyMs ?? 3_600_000, () => void this.tick());
  }
}

/**
 * Planning, the store side: read mailboxes, their counted sends and their queued requests, let the
 * pure planner (../pacing/planner.ts) give each request its send instant, and write `send_at`.
 *
 * A pass works in batches of whole workspaces (a workspace with a sequence or workspace cap is
 * always planned with all its mailboxes, so its shared caps are divided in one place), each batch
 * in one transaction under an advisory lock per workspace, so two dispatchers never plan the same
 * mailbox at once. A plan is a function of the store's state and the time, seeded per mailbox and
 * local date: planning again gives the same slots unless something changed (a send went out
 * late, a request was cancelled or added), and only rows whose slot or note changed are written.
 */
import { cadenzaError, isCadenzaError } from '../../common/errors.ts';
import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import { unit } from '../../mailbox/pacing/draw.ts';
import { LocalDays } from '../../mailbox/pacing/local-day.ts';
import { blockedReason, toMailboxPacing } from '../../mailbox/pacing/mailbox.ts';
import { planSends, type PlanMailbox, type PlanRequest, type SharedCap } from '../../mailbox/pacing/planner.ts';
import { parseWindow, resolveZone, type SendWindow } from '../../calendar/index.ts';
import type { SequenceSettings } from '../../sequence/sequence-repo.ts';
import type { Store, Tx } from '../../store/store.ts';
import {
  capWorkspaceMailboxesSql,
  cappedSequencesSql,
  lockSql,
  mailboxesSql,
  mailboxWorkspacesSql,
  PLAN_LOCK,
  queuedSql,
  recordPlanSql,
  sequencesSql,
  usageSql,
  workspaceUsageSql,
  writePlanSql,
  type MailboxRow,
  type QueuedRow,
  type SequenceRow,
} from './sql.ts';

const DAY_MS = 86_400_000;

export interface PlanOptions {
  /** Local days ahead to plan, today included. Default 14. */
  horizonDays?: number;
  /** Mailboxes per transaction (whole workspaces are never split). Default 2000. */
  batchMailboxes?: number;
}

export interface PlanReport {
  mailboxes: number;
  requests: number;
  planned: number;
  unplaced: number;
  /** Rows whose slot or note changed and were written. */
  written: number;
  /** Rows not written because a claim or a cancel held them (they are leaving the queue). */
  skipped: number;
  /** Mailboxes whose settings could not be read; their requests are unplaced with the reason. */
  errors: Array<{ mailboxId: string; message: string }>;
  readMs: number;
  planMs: number;
  writeMs: number;
}

export interface PlanDeps {
  store: Store;
  clock: Clock;
  log?: Logger;
}

function emptyReport(): PlanReport {
  return { mailboxes: 0, requests: 0, planned: 0, unplaced: 0, written: 0, skipped: 0, errors: [], readMs: 0, planMs: 0, writeMs: 0 };
}

/** Plans the given mailboxes (and, for workspaces with shared caps, their whole workspace). */
export async function planMailboxes(deps: PlanDeps, mailboxIds: readonly string[], opts: PlanOptions = {}): Promise<PlanReport> {
  const horizonDays = opts.horizonDays ?? 14;
  if (!Number.isInteger(horizonDays) || horizonDays < 1 || horizonDays > 366) {
    throw cadenzaError('INVALID_INPUT', `horizonDays must be an integer from 1 to 366, got ${String(horizonDays)}`, { field: 'horizonDays' });
  }
  const batchSize = opts.batchMailboxes ?? 2000;
  const report = emptyReport();
  if (mailboxIds.length === 0) return report;
  const db = deps.store.db;
  // Which workspace each mailbox is in; a capped workspace brings all its mailboxes.
  const base = (await mailboxWorkspacesSql([...new Set(mailboxIds)]).execute(db)).rows;
  const byWs = new Map<string, Set<string>>();
  for (const m of base) {
    let s = byWs.get(m.workspace_id);
    if (!s) byWs.set(m.workspace_id, (s = new Set()));
    s.add(m.id);
  }
  if (byWs.size) {
    for (const m of (await capWorkspaceMailboxesSql([...byWs.keys()]).execute(db)).rows) byWs.get(m.workspace_id)!.add(m.id);
  }
  // Batches of whole workspaces, in a fixed order (the advisory locks are taken in that order too).
  const batches: Array<{ workspaces: string[]; mailboxes: string[] }> = [];
  let cur = { workspaces: [] as string[], mailboxes: [] as string[] };
  for (const ws of [...byWs.keys()].sort()) {
    const ids = [...byWs.get(ws)!].sort();
    if (cur.mailboxes.length > 0 && cur.mailboxes.length + ids.length > batchSize) {
      batches.push(cur);
      cur = { workspaces: [], mailboxes: [] };
    }
    cur.workspaces.push(ws);
    cur.mailboxes.push(...ids);
  }
  if (cur.mailboxes.length) batches.push(cur);
  for (const b of batches) {
    await deps.store.db.transaction().execute((tx) => planBatch(tx, deps, b.workspaces, b.mailboxes, horizonDays, report));
  }
  return report;
}

interface SequenceInfo {
  window: SendWindow | Error;
  skipHolidays: boolean;
  cap: number | null;
}

function sequenceInfo(row: SequenceRow): SequenceInfo {
  const settings = (row.settings ?? {}) as SequenceSettings;
  let window: SendWindow | Error;
  try {
    window = parseWindow(row.send_window as Parameters<typeof parseWindow>[0]);
  } catch (e) {
    window = e as Error;
  }
  return { window, skipHolidays: settings.skipHolidays ?? true, cap: row.daily_cap };
}

const ms = (since: number) => Number(process.hrtime.bigint() / 1_000_000n) - since;
const nowMs = () => Number(process.hrtime.bigint() / 1_000_000n);

async function planBatch(tx: Tx, deps: PlanDeps, workspaces: string[], mailboxIds: string[], horizonDays: number, report: PlanReport): Promise<void> {
  const now = deps.clock.now();
  let t0 = nowMs();
  for (const ws of workspaces) await lockSql(PLAN_LOCK, ws).execute(tx);
  const mbRows = (await mailboxesSql(mailboxIds).execute(tx)).rows;
  // Yesterday and today in any zone start after now - 2 days.
  const since = now - 2 * DAY_MS;
  const usage = new Map<string, number[]>();
  for (const u of (await usageSql(mailboxIds, since).execute(tx)).rows) {
    let list = usage.get(u.mailbox_id);
    if (!list) usage.set(u.mailbox_id, (list = []));
    list.push(u.claimed_at.getTime());
  }
  const queued = (await queuedSql(mailboxIds).execute(tx)).rows;
  const seqIds = [...new Set(queued.map((q) => q.sequence_id))];
  const seqRows = seqIds.length ? (await sequencesSql(seqIds).execute(tx)).rows : [];
  const wsInfo = new Map<string, { zone: string; cap: number | null }>();
  for (const m of mbRows) if (!wsInfo.has(m.workspace_id)) wsInfo.set(m.workspace_id, { zone: resolveZone({ workspace: m.ws_zone }).zone, cap: m.ws_cap });
  const capped = [...wsInfo.entries()].filter(([, w]) => w.cap !== null).map(([id]) => id);
  const cappedSeqRows = wsInfo.size ? (await cappedSequencesSql([...wsInfo.keys()]).execute(tx)).rows : [];
  const sequences = new Map<string, SequenceInfo>();
  for (const s of [...seqRows, ...cappedSeqRows]) sequences.set(s.id, sequenceInfo(s));
  const sharedWs = [...new Set([...capped, ...cappedSeqRows.map((s) => s.workspace_id)])];
  const wsUsage = sharedWs.length ? (await workspaceUsageSql(sharedWs, since).execute(tx)).rows : [];
  report.readMs += ms(t0);

  t0 = nowMs();
  const { input, notes } = buildInput(now, horizonDays, mbRows, usage, queued, sequences, wsInfo, cappedSeqRows, wsUsage, report);
  const result = planSends(input);
  report.planMs += ms(t0);

  t0 = nowMs();
  const ids: string[] = [];
  const sendAt: Array<string | null> = [];
  const noteCol: Array<string | null> = [];
  const perMailbox = new Map<string, { planned: number; unplaced: number }>();
  for (const q of queued) {
    const at = result.slots.get(q.id);
    const note = at === undefined ? (notes.get(q.id) ?? result.unplaced.get(q.id) ?? 'not planned') : null;
    const pm = perMailbox.get(q.mailbox_id) ?? { planned: 0, unplaced: 0 };
    perMailbox.set(q.mailbox_id, pm);
    if (at !== undefined) {
      pm.planned++;
      report.planned++;
    } else {
      pm.unplaced++;
      report.unplaced++;
    }
    // Unchanged rows are not written: a daily re-plan mostly confirms yesterday's plan.
    const same = q.planned_at !== null && (at === undefined ? q.send_at === null && q.plan_note === note : q.send_at !== null && q.send_at.getTime() === at && q.plan_note === null);
    if (same) continue;
    ids.push(q.id);
    sendAt.push(at === undefined ? null : new Date(at).toISOString());
    noteCol.push(note);
  }
  report.requests += queued.length;
  report.mailboxes += mbRows.length;
  const CHUNK = 20_000;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const r = await writePlan(tx, ids.slice(i, i + CHUNK), sendAt.slice(i, i + CHUNK), noteCol.slice(i, i + CHUNK), now);
    report.written += r;
    report.skipped += Math.min(CHUNK, ids.length - i) - r;
  }
  // Bookkeeping per mailbox: a full re-plan after its next local midnight (a new day's budget,
  // slots freed by cancellations), spread over half an hour so that midnight is not a stampede.
  const mbIds: string[] = [];
  const replan: Array<string | null> = [];
  const planned: number[] = [];
  const unplacedCol: number[] = [];
  for (const m of mbRows) {
    const pm = perMailbox.get(m.id) ?? { planned: 0, unplaced: 0 };
    mbIds.push(m.id);
    planned.push(pm.planned);
    unplacedCol.push(pm.unplaced);
    if (pm.planned + pm.unplaced === 0) {
      replan.push(null);
      continue;
    }
    const days = new LocalDays(resolveZone({ mailbox: m.time_zone, workspace: m.ws_zone }).zone);
    const midnight = days.start(days.dayOf(now) + 1);
    replan.push(new Date(midnight + Math.floor(unit(`${m.id}:${midnight}:replan`) * 30 * 60_000)).toISOString());
  }
  if (mbIds.length) await recordPlanSql(mbIds, replan, planned, unplacedCol, now).execute(tx);
  report.writeMs += ms(t0);
  deps.log?.debug({ mailboxes: mbRows.length, requests: queued.length, written: report.written }, 'dispatch: planned a batch');
}

async function writePlan(tx: Tx, ids: string[], sendAt: Array<string | null>, notes: Array<string | null>, now: number): Promise<number> {
  const r = await writePlanSql(ids, sendAt, notes, now).execute(tx);
  return Number(r.numAffectedRows ?? 0n);
}

function buildInput(
  now: number,
  horizonDays: number,
  mbRows: MailboxRow[],
  usage: Map<string, number[]>,
  queued: QueuedRow[],
  sequences: Map<string, SequenceInfo>,
  wsInfo: Map<string, { zone: string; cap: number | null }>,
  cappedSeqRows: SequenceRow[],
  wsUsage: Array<{ workspace_id: string; sequence_id: string; claimed_at: Date }>,
  report: PlanReport,
) {
  const notes = new Map<string, string>();
  const mailboxes: PlanMailbox[] = [];
  for (const m of mbRows) {
    let blocked = blockedReason(m);
    let pacing;
    try {
      pacing = toMailboxPacing(m, { time_zone: m.ws_zone, settings: m.ws_settings });
    } catch (e) {
      if (!isCadenzaError(e)) throw e;
      report.errors.push({ mailboxId: m.id, message: e.message });
      blocked = `settings are invalid: ${e.message}`;
      pacing = toMailboxPacing({ ...m, ramp: {}, settings: {} }, { time_zone: m.ws_zone, settings: {} });
    }
    mailboxes.push({ pacing, workspaceId: m.workspace_id, blocked, counted: usage.get(m.id) ?? [] });
  }
  const requests: PlanRequest[] = [];
  for (const q of queued) {
    const s = sequences.get(q.sequence_id);
    if (!s) {
      notes.set(q.id, 'sequence not found');
      continue;
    }
    if (s.window instanceof Error) {
      notes.set(q.id, `the sequence's send window cannot be read: ${s.window.message}`);
      continue;
    }
    requests.push({
      id: q.id,
      mailboxId: q.mailbox_id,
      dueAt: q.due_at.getTime(),
      sequenceId: q.sequence_id,
      calendar: {
        zone: q.time_zone,
        window: s.window,
        ...(q.country ? { country: q.country } : {}),
        ...(q.region ? { region: q.region } : {}),
        skipHolidays: s.skipHolidays,
        jitterMinutes: 0,
      },
    });
  }
  // Shared caps: what the workspace (and each capped sequence) already sent, by its local day.
  const workspaceCaps = new Map<string, SharedCap>();
  const sequenceCaps = new Map<string, SharedCap>();
  for (const [id, w] of wsInfo) if (w.cap !== null) workspaceCaps.set(id, { zone: w.zone, cap: w.cap, used: new Map() });
  for (const s of cappedSeqRows) {
    const w = wsInfo.get(s.workspace_id);
    if (w && s.daily_cap !== null) sequenceCaps.set(s.id, { zone: w.zone, cap: s.daily_cap, used: new Map() });
  }
  const dayIndex = new Map<string, LocalDays>();
  const bump = (cap: SharedCap | undefined, at: number) => {
    if (!cap) return;
    let days = dayIndex.get(cap.zone);
    if (!days) dayIndex.set(cap.zone, (days = new LocalDays(cap.zone)));
    const d = days.dayOf(at);
    cap.used.set(d, (cap.used.get(d) ?? 0) + 1);
  };
  for (const u of wsUsage) {
    bump(workspaceCaps.get(u.workspace_id), u.claimed_at.getTime());
    bump(sequenceCaps.get(u.sequence_id), u.claimed_at.getTime());
  }
  return { input: { now, horizonDays, mailboxes, requests, workspaceCaps, sequenceCaps }, notes };
}

import type { Clock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { validateDefinition, type SequenceDefinition } from '../sequence/definition.ts';
import type { Store } from '../store/store.ts';
import { resolveZone } from '../calendar/index.ts';
import type { SimPacing } from './pacing-check.ts';
import { pruneExperiments, randomExperiment } from './experiments.ts';

/**
 * The simulated workspace: mailboxes, leads spread over zones chosen for their awkwardness, and one
 * to three sequences with random windows, stop rules and steps of every kind and delay unit. Built
 * through the same code paths a user's actions take (sequence definitions are validated and applied
 * with applyDefinition), from a seeded random source only.
 */

export interface LeadProfile {
  zone: string | null;
  country: string | null;
  region: string | null;
}

/**
 * Half-hour and 45-minute offsets (Kolkata, Adelaide, St John's, Kathmandu, Chatham), southern
 * daylight saving (Adelaide, Sydney, Chatham), zones without daylight saving (Kolkata, Tokyo, São
 * Paulo), countries with public holidays and regions (US-CA, GB-ENG, DE-BY, AU-SA, AU-NSW, CA-NL),
 * and leads with no zone or no country (the zone falls back to the mailbox's or the workspace's).
 */
export const leadProfiles: readonly LeadProfile[] = [
  { zone: 'America/New_York', country: 'US', region: null },
  { zone: 'America/Los_Angeles', country: 'US', region: 'CA' },
  { zone: 'Europe/London', country: 'GB', region: 'ENG' },
  { zone: 'Europe/Berlin', country: 'DE', region: 'BY' },
  { zone: 'Europe/Paris', country: 'FR', region: null },
  { zone: 'Asia/Kolkata', country: 'IN', region: null },
  { zone: 'Australia/Adelaide', country: 'AU', region: 'SA' },
  { zone: 'Australia/Sydney', country: 'AU', region: 'NSW' },
  { zone: 'America/St_Johns', country: 'CA', region: 'NL' },
  { zone: 'Asia/Kathmandu', country: null, region: null },
  { zone: 'Pacific/Chatham', country: 'NZ', region: null },
  { zone: 'America/Sao_Paulo', country: 'BR', region: null },
  { zone: 'Asia/Tokyo', country: null, region: null },
  { zone: null, country: 'US', region: null },
  { zone: null, country: 'GB', region: null },
  { zone: null, country: null, region: null },
];

const mailboxZones = ['America/New_York', 'Europe/London', 'Europe/Berlin', 'Australia/Sydney', 'Asia/Kolkata', null] as const;
const workspaceZones = ['Europe/London', 'America/Chicago', 'UTC', 'Asia/Singapore'] as const;

/**
 * Where a run starts: a random moment of 2026, or (half the time) a few days before a date where
 * human time is hard: daylight-saving changes in the US, the EU and Australia, Easter, the year end.
 */
const hardDates = [
  Date.UTC(2026, 2, 8), // US spring forward
  Date.UTC(2026, 2, 29), // EU spring forward
  Date.UTC(2026, 3, 3), // Good Friday; AU falls back on the 5th
  Date.UTC(2026, 9, 4), // AU spring forward
  Date.UTC(2026, 9, 25), // EU fall back
  Date.UTC(2026, 10, 1), // US fall back
  Date.UTC(2026, 11, 25), // Christmas, Boxing Day, New Year
];

export function pickStart(r: Random): number {
  const day = 86_400_000;
  if (r.next() < 0.5) {
    const d = hardDates[r.int(0, hardDates.length - 1)]!;
    return d - r.int(0, 6) * day - r.int(0, 1439) * 60_000;
  }
  return Date.UTC(2026, 0, 1) + r.int(0, 340) * day + r.int(0, 1439) * 60_000;
}

function pick<T>(r: Random, xs: readonly T[]): T {
  return xs[r.int(0, xs.length - 1)]!;
}

const dayNames = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

function hhmm(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/** A send window as a user would write it: 'any', office hours, odd days, windows crossing midnight. */
export function randomWindow(r: Random): unknown {
  const x = r.next();
  if (x < 0.15) return 'any';
  if (x < 0.4) return 'Mon-Fri 09:00-17:00';
  const days = dayNames.filter(() => r.next() < 0.55);
  if (days.length === 0) days.push(pick(r, dayNames));
  const start = r.int(0, 95) * 15;
  let end: number;
  if (r.next() < 0.25) {
    // crossing midnight: 22:00-02:00 style
    end = r.int(0, Math.max(0, start / 15 - 1)) * 15;
  } else if (r.next() < 0.1) {
    end = 1440;
  } else {
    end = Math.min(1440, start + r.int(1, 40) * 15);
  }
  if (end === start) end = (start + 60) % 1440;
  return { days, start: hhmm(start), end: end === 1440 ? '24:00' : hhmm(end) };
}

const units = ['minutes', 'hours', 'days', 'business days'] as const;

export function randomDelay(r: Random): string {
  const unit = pick(r, units);
  const amount = unit === 'minutes' ? pick(r, [0, 0, 5, 20, 90, 240]) : unit === 'hours' ? r.int(0, 72) : r.int(0, 5);
  return `${amount} ${unit}`;
}

/** A step in the definition file's form (see sequence/definition.ts). */
export type RawStep = Record<string, unknown> & { key: string; type: 'email' | 'call' | 'manual' | 'wait' | 'branch' };
export interface RawDefinition {
  key: string;
  name: string;
  window: unknown;
  holidays: boolean;
  jitter_minutes: number;
  stop_rules: Record<string, unknown>;
  mailboxes: string[];
  steps: RawStep[];
  /** Sequence experiments (sim/experiments.ts). */
  experiments?: unknown[];
}

export function randomStep(r: Random, key: string): RawStep {
  const x = r.next();
  const delay = randomDelay(r);
  if (x < 0.5) {
    if (r.next() < 0.3) {
      return { key, type: 'email', delay, variants: [
        { key: 'a', subject: `Subject ${key} A`, body: 'Hello A', weight: r.int(0, 3) },
        { key: 'b', subject: `Subject ${key} B`, body: 'Hello B', weight: r.int(1, 3) },
      ] };
    }
    return { key, type: 'email', delay, subject: `Subject ${key}`, body: `Body ${key}` };
  }
  if (x < 0.68) {
    const retry = r.next() < 0.5 ? { retry: { attempts: r.int(1, 3), after: r.next() < 0.5 ? `${r.int(1, 6)} hours` : `${r.int(1, 2)} business days` } } : {};
    return { key, type: 'call', delay, title: `Call (${key})`, wait_for_task: r.next() < 0.7, ...retry };
  }
  if (x < 0.8) return { key, type: 'manual', delay, title: `Task (${key})`, wait_for_task: r.next() < 0.7 };
  return { key, type: 'wait', delay };
}

export function randomBranch(r: Random, key: string, moveTo: string | null): RawStep {
  const end = moveTo && r.next() < 0.5 ? { move_to: moveTo, after: `${r.int(0, 2)} days` } : pick(r, ['end', 'continue']);
  return {
    key,
    type: 'branch',
    delay: randomDelay(r),
    branches: [
      { key: 'us', when: { lead: { field: 'country', in: ['US'] } }, steps: [randomStep(r, `${key}-us1`), randomStep(r, `${key}-us2`)].filter((s) => s.type !== 'branch') },
      { key: 'rest', steps: [randomStep(r, `${key}-rest1`)], then: end },
    ],
  };
}

/** The key of the sequence reply rules move leads to (issue 18). */
export const NURTURE = 'nurture';

/**
 * Issue 18: a sequence's reply rules (stop_rules.on_reply), drawn from their own stream so that a
 * seed's other draws stay as they were. An interested reply (or a question) notifies the owner; a
 * not-interested one (the classifier's "not now"), or a referral, moves the lead to the nurture
 * sequence after a while. A quarter of the sequences have none.
 */
export function randomReplyRules(r: Random): Record<string, unknown> | undefined {
  if (r.next() < 0.25) return undefined;
  const rules: Record<string, unknown> = {};
  if (r.next() < 0.8) rules['interested'] = 'notify';
  if (r.next() < 0.8) rules['not_interested'] = { move_to: NURTURE, after: pick(r, ['0 days', '4 hours', '2 days', '3 business days', '1 week']) };
  if (r.next() < 0.3) rules['question'] = 'notify';
  if (r.next() < 0.2) rules['referral'] = { move_to: NURTURE, after: '1 day' };
  return Object.keys(rules).length ? rules : undefined;
}

/**
 * The nurture sequence reply rules move leads to, drawn from the rules' stream: a random sequence
 * without reply rules of its own, whose first email, half the time, has no subject (a subsequence:
 * it continues the lead's thread, and admits leads only by a move that brings one).
 */
export function nurtureDefinition(r: Random, mailboxEmails: string[]): RawDefinition {
  const d = randomDefinition(r, NURTURE, mailboxEmails);
  const first = d.steps.find((s) => s.type === 'email');
  if (first && r.next() < 0.5) {
    delete first['subject'];
    if (Array.isArray(first['variants'])) first['variants'] = (first['variants'] as Array<Record<string, unknown>>).map(({ subject: _, ...v }) => v);
  }
  return d;
}

export function randomDefinition(r: Random, key: string, mailboxEmails: string[], replyRules?: Random): RawDefinition {
  const steps: RawStep[] = [];
  const n = r.int(2, 6);
  for (let i = 0; i < n; i++) steps.push(randomStep(r, `${key}-s${i}`));
  // Issue 18: a branch on a lead field (a condition edits cannot invalidate by moving steps), whose
  // default arm ends the enrollment or moves it to the first sequence (a subsequence).
  if (r.next() < 0.5) steps.splice(r.int(1, steps.length), 0, randomBranch(r, `${key}-b`, key === 'q0' ? null : 'q0'));
  const mailboxes = mailboxEmails.filter(() => r.next() < 0.6);
  if (mailboxes.length === 0) mailboxes.push(pick(r, mailboxEmails));
  const onReply = replyRules ? randomReplyRules(replyRules) : undefined;
  return randomExperiment(r, {
    key,
    name: `Sequence ${key}`,
    window: randomWindow(r),
    holidays: r.next() < 0.8,
    jitter_minutes: pick(r, [0, 15, 45, 90]),
    stop_rules: {
      on_out_of_office: r.next() < 0.8 ? 'pause' : 'ignore',
      ooo_default_pause_days: r.int(1, 10),
      on_meeting_booked: r.next() < 0.8 ? 'finish' : 'continue',
      max_soft_bounces: r.int(1, 4),
      ...(onReply ? { on_reply: onReply } : {}),
    },
    mailboxes,
    steps,
  });
}

/**
 * A random edit of a running sequence: add, remove, restore, reorder steps and change delays, as a
 * user editing the definition file would. `removedSteps` are the steps removed so far (a removed
 * key can come back: applyDefinition restores the archived step).
 */
export function editDefinition(r: Random, def: RawDefinition, removedSteps: readonly RawStep[], nextKey: () => string): { def: RawDefinition; ops: string[] } {
  const steps = def.steps.map((s) => ({ ...s }));
  const removed = [...removedSteps];
  const ops: string[] = [];
  const n = r.int(1, 3);
  for (let i = 0; i < n; i++) {
    const x = r.next();
    if (x < 0.3 && steps.length < 12) {
      const s = randomStep(r, nextKey());
      const at = r.int(0, steps.length);
      steps.splice(at, 0, s);
      ops.push(`add ${s.key}@${at}`);
    } else if (x < 0.5 && steps.length > 1) {
      const at = r.int(0, steps.length - 1);
      const [s] = steps.splice(at, 1);
      removed.push(s!);
      ops.push(`remove ${s!.key}`);
    } else if (x < 0.6 && removed.length > 0) {
      const s = removed.splice(r.int(0, removed.length - 1), 1)[0]!;
      const at = r.int(0, steps.length);
      steps.splice(at, 0, s);
      ops.push(`restore ${s.key}@${at}`);
    } else if (x < 0.8 && steps.length > 1) {
      const a = r.int(0, steps.length - 1);
      const b = r.int(0, steps.length - 1);
      [steps[a], steps[b]] = [steps[b]!, steps[a]!];
      ops.push(`swap ${a},${b}`);
    } else {
      const at = r.int(0, steps.length - 1);
      steps[at] = { ...steps[at]!, delay: randomDelay(r) };
      ops.push(`delay ${steps[at]!.key}=${String(steps[at]!.delay)}`);
    }
  }
  return { def: pruneExperiments({ ...def, steps }), ops };
}

export function toDefinition(raw: RawDefinition): SequenceDefinition {
  return validateDefinition(raw);
}

export interface SimLead extends LeadProfile {
  id: string;
  email: string;
}

export interface SimSequence {
  id: string;
  /** The definition as last applied. */
  raw: RawDefinition;
  /** Every step the sequence has had, by key (the removed ones can be restored). */
  known: Map<string, RawStep>;
}

/** The steps a sequence had once and has no longer. */
export function removedSteps(s: SimSequence): RawStep[] {
  const live = new Set(s.raw.steps.map((x) => x.key));
  return [...s.known.values()].filter((x) => !live.has(x.key));
}

/** Records a definition that was applied. */
export function applied(s: SimSequence, raw: RawDefinition): void {
  s.raw = raw;
  for (const x of raw.steps) s.known.set(x.key, x);
}

export interface SimWorld {
  workspaceId: string;
  mailboxes: Array<{ id: string; email: string; pacing: SimPacing }>;
  leads: SimLead[];
  sequences: SimSequence[];
  /** The sequence reply rules move leads to (issue 18), when the world has reply rules; never enrolled in or edited directly. */
  nurture?: SimSequence;
}


/**
 * A mailbox's pacing, drawn: small daily caps (so they bind), a ramp on half of them (some begun
 * before the run, some during it), an hourly cap on some, working days from a few hours to a full
 * day, weekends worked or not, lunch or not, gaps from 2 to 40 minutes. `settings` is what the
 * mailbox stores (settings.pacing); `check` is the same, for the checks (pacing-check.ts).
 */
function randomPacing(r: Random, now: number): { settings: Record<string, unknown>; check: Omit<SimPacing, 'mailboxId' | 'zone'> } {
  // Some mailboxes work around the clock (00:30-23:30, every day), so that prospects in any zone
  // can be reached; the others keep office hours on their own weekdays.
  const calm = r.next() < 0.4;
  const start = calm ? 30 : r.int(12, 21) * 30; // 06:00-10:30
  const end = calm ? 1410 : r.int(29, 40) * 30; // 14:30-20:00
  const jitter = calm ? r.int(0, 15) : r.int(0, 30);
  const workDays = calm || r.next() < 0.3 ? [1, 2, 3, 4, 5, 6, 7] : r.next() < 0.7 ? [1, 2, 3, 4, 5] : [1, 2, 3, 4, 5, 6, 7].filter(() => r.next() < 0.7);
  if (workDays.length === 0) workDays.push(r.int(1, 7));
  const gapMin = r.int(2, 12);
  const gap: [number, number] = [gapMin, gapMin + r.int(0, 15)];
  const ceilingMin = r.int(1, 6);
  const ceiling: [number, number] = [ceilingMin, ceilingMin + r.int(0, 3)];
  const lunch = calm || r.next() < 0.5 ? null : { at: hhmm(r.int(23, 27) * 30), jitterMinutes: r.int(0, 30), minutes: [20, 20 + r.int(0, 40)], probability: r.next() };
  const ramp = r.next() < 0.5 ? null : { start: r.int(1, 3), step: r.int(0, 2), ...(r.next() < 0.3 ? { target: r.int(1, 8) } : {}) };
  const settings = { dayStart: hhmm(start), dayEnd: hhmm(end), dayJitterMinutes: jitter, workDays, lunch, gapMinutes: gap, hourlyCeiling: ceiling, pickupMinutes: r.int(0, 10) };
  return {
    settings,
    check: {
      dailyCap: r.int(1, 10),
      hourlyCap: r.next() < 0.5 ? null : r.int(1, 4),
      ramp,
      rampStartedAt: now + r.int(-10, 2) * 86_400_000 + r.int(0, 86_399_999),
      dayStart: settings.dayStart,
      dayEnd: settings.dayEnd,
      dayJitterMinutes: jitter,
      workDays,
      gapMinutes: gap,
      hourlyCeiling: ceiling,
    },
  };
}

export interface WorldOptions {
  leads: number;
  /** 1-3 when absent. */
  sequences?: number;
  /** Issue 18: give the sequences reply rules and add the nurture sequence, drawing from this stream. */
  replyRules?: Random;
}

export async function buildWorld(store: Store, deps: { clock: Clock; random: Random }, opts: WorldOptions): Promise<SimWorld> {
  const r = deps.random;
  const id = () => newId(deps.clock.now(), r);
  const workspaceId = id();
  const workspaceZone = pick(r, workspaceZones);
  await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Sim', time_zone: workspaceZone, country: pick(r, ['US', 'GB', null]) }).execute();
  const mailboxes: SimWorld['mailboxes'] = [];
  const nMailboxes = r.int(1, 3);
  for (let i = 0; i < nMailboxes; i++) {
    const m = { id: id(), email: `rep${i}@${pick(r, ['acme.test', 'acme-mail.test'])}` };
    const zone = pick(r, mailboxZones);
    const p = randomPacing(r, deps.clock.now());
    const pacing: SimPacing = { mailboxId: m.id, zone: resolveZone({ mailbox: zone, workspace: workspaceZone }).zone, ...p.check };
    mailboxes.push({ ...m, pacing });
    await store.db
      .insertInto('mailbox')
      .values({
        id: m.id,
        workspace_id: workspaceId,
        email: m.email,
        provider: pick(r, ['smtp_imap', 'gmail', 'graph'] as const),
        time_zone: zone,
        daily_cap: p.check.dailyCap,
        hourly_cap: p.check.hourlyCap,
        ramp: JSON.stringify(p.check.ramp ?? {}),
        ramp_started_at: new Date(p.check.rampStartedAt),
        settings: JSON.stringify({ pacing: p.settings }),
      })
      .execute();
  }
  const leads: SimLead[] = [];
  for (let i = 0; i < opts.leads; i++) {
    const p = pick(r, leadProfiles);
    const email = `lead${i}@prospect${i % 5}.test`;
    leads.push({ id: id(), email, ...p });
  }
  if (leads.length) {
    await store.db
      .insertInto('lead')
      .values(leads.map((l) => ({ id: l.id, workspace_id: workspaceId, email: l.email, email_norm: l.email, first_name: 'Pat', time_zone: l.zone, country: l.country, region: l.region })))
      .execute();
  }
  const sequences: SimSequence[] = [];
  const nSeq = opts.sequences ?? r.int(1, 3);
  for (let i = 0; i < nSeq; i++) {
    const raw = randomDefinition(r, `q${i}`, mailboxes.map((m) => m.email), opts.replyRules);
    const s = await applyDefinition(store, deps, workspaceId, toDefinition(raw));
    const seq: SimSequence = { id: s.sequenceId, raw, known: new Map() };
    applied(seq, raw);
    sequences.push(seq);
  }
  let nurture: SimSequence | undefined;
  if (opts.replyRules) {
    const raw = nurtureDefinition(opts.replyRules, mailboxes.map((m) => m.email));
    // Its ids from the rules' stream too: the world's own draws stay as they were.
    const s = await applyDefinition(store, { clock: deps.clock, random: opts.replyRules }, workspaceId, toDefinition(raw));
    nurture = { id: s.sequenceId, raw, known: new Map() };
    applied(nurture, raw);
  }
  return { workspaceId, mailboxes, leads, sequences, ...(nurture ? { nurture } : {}) };
}

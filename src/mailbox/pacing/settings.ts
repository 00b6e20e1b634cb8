/**
 * A mailbox's pacing settings: the shape of its human working day and of the gaps between its
 * sends. Stored as `settings.pacing` on the workspace (defaults for its mailboxes) and on the
 * mailbox (overrides), merged over the built-in defaults below, field by field.
 *
 * The caps themselves are columns (mailbox.daily_cap, hourly_cap, ramp; sequence.daily_cap;
 * workspace.daily_cap): they are what a user sets most and what the claim checks under a lock.
 */
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import type { Weekday } from '../../calendar/index.ts';

export interface PacingSettings {
  /** The working day's usual start and end, local 'HH:MM' in the mailbox's zone (end > start: no night shifts). */
  dayStart: string;
  dayEnd: string;
  /** Each day's start and end move by up to this many minutes either way, independently. */
  dayJitterMinutes: number;
  /** ISO weekdays the mailbox works (1 = Monday). */
  workDays: Weekday[];
  /** A lunch break, on a share of days; null: none. */
  lunch: LunchSettings | null;
  /** A gap between two sends is drawn from [min, max] minutes (fractions allowed: 0.5 is 30 s; stretched on quiet days unless spreadDay is false, see bucket.ts). */
  gapMinutes: [number, number];
  /**
   * On a day with more time than sends, stretch the gaps so the day's budget spreads over the
   * working day (a cap of 30 over 8 hours: ~16 min apart). False keeps every gap within
   * gapMinutes: what a minute-scale sequence needs (a 2-minute follow-up stays ~2 minutes).
   */
  spreadDay: boolean;
  /** Each day draws its ceiling of sends per rolling hour from [min, max] (and never above mailbox.hourly_cap). */
  hourlyCeiling: [number, number];
  /**
   * When the mailbox waits for a request to become sendable (its due time, the prospect's window
   * opening), the send follows that moment after up to this many minutes, not on the exact minute.
   */
  pickupMinutes: number;
}

export interface LunchSettings {
  /** Usual start, local 'HH:MM'. */
  at: string;
  jitterMinutes: number;
  /** Length drawn from [min, max] minutes. */
  minutes: [number, number];
  /** Share of working days with a lunch break, 0..1. */
  probability: number;
}

export const defaultPacingSettings: PacingSettings = {
  dayStart: '08:40',
  dayEnd: '17:20',
  dayJitterMinutes: 20,
  workDays: [1, 2, 3, 4, 5],
  lunch: { at: '12:15', jitterMinutes: 30, minutes: [30, 60], probability: 0.8 },
  gapMinutes: [8, 15],
  spreadDay: true,
  hourlyCeiling: [6, 8],
  pickupMinutes: 4,
};

/** The numbers the planner uses: minutes after local midnight and milliseconds. */
export interface CompiledPacing {
  readonly startMin: number;
  readonly endMin: number;
  readonly jitterMin: number;
  /** Bit w set when ISO weekday w is a working day. */
  readonly dayMask: number;
  readonly lunch: { atMin: number; jitterMin: number; minMin: number; maxMin: number; probability: number } | null;
  readonly gapMinMs: number;
  readonly gapMaxMs: number;
  readonly spreadDay: boolean;
  readonly hourlyMin: number;
  readonly hourlyMax: number;
  readonly pickupMs: number;
}

const MINUTE_MS = 60_000;
const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;
const hhmm = z.string().regex(HHMM, 'expected HH:MM (00:00-23:59), e.g. 08:30');
const minutes = (max: number) => z.number().finite().min(0).max(max);
const range = (lo: number, max: number, int: boolean) =>
  z
    .tuple([int ? z.number().int().min(lo).max(max) : z.number().finite().min(lo).max(max), int ? z.number().int().min(lo).max(max) : z.number().finite().min(lo).max(max)])
    .refine(([a, b]) => a <= b, 'expected [min, max]: the minimum may not be larger than the maximum');

// Every field optional: a workspace or mailbox sets only what it changes. Unknown keys are an
// error, so a typo ('gapMinute') is reported instead of silently ignored.
export const MIN_GAP_MINUTES = 1 / 6;

export const pacingOverridesSchema = z.strictObject({
  dayStart: hhmm.optional(),
  dayEnd: hhmm.optional(),
  dayJitterMinutes: minutes(120).optional(),
  workDays: z.array(z.number().int().min(1).max(7)).min(1, 'at least one working day').optional(),
  lunch: z
    .union([
      z.null(),
      z.strictObject({
        at: hhmm.optional(),
        jitterMinutes: minutes(120).optional(),
        minutes: range(0, 240, false).optional(),
        probability: z.number().min(0).max(1).optional(),
      }),
    ])
    .optional(),
  // Down to 10 s, for minute-scale sequences (a test campaign, an internal drip); under that it
  // would be a burst. Over a day it would never send twice a day.
  gapMinutes: range(MIN_GAP_MINUTES, 1440, false).optional(),
  spreadDay: z.boolean().optional(),
  hourlyCeiling: range(1, 1000, true).optional(),
  pickupMinutes: minutes(60).optional(),
});

/** What a workspace or a mailbox sets in `settings.pacing`: any subset of the fields. */
export type PacingOverrides = z.infer<typeof pacingOverridesSchema>;
type PartialPacing = PacingOverrides;

function toMinutes(t: string): number {
  return Number(t.slice(0, 2)) * 60 + Number(t.slice(3, 5));
}

function invalid(where: string, problems: string[], input: unknown): never {
  throw cadenzaError('INVALID_INPUT', `invalid pacing settings (${where}): ${problems.join('; ')}`, { field: 'pacing', where, problems, input });
}

function parsePartial(raw: unknown, where: string): PartialPacing {
  if (raw === undefined || raw === null) return {};
  const r = pacingOverridesSchema.safeParse(raw);
  if (!r.success) invalid(where, r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`), raw);
  return r.data;
}

/**
 * Merges the workspace's and the mailbox's `settings.pacing` over the defaults and checks the
 * result as a whole. `where` names the source in errors ('mailbox 0190…'). Throws INVALID_INPUT.
 */
export function resolvePacingSettings(workspaceRaw: unknown, mailboxRaw: unknown, where = 'settings.pacing'): PacingSettings {
  const ws = parsePartial(workspaceRaw, `workspace ${where}`);
  const mb = parsePartial(mailboxRaw, where);
  const lunchOf = (p: PartialPacing): Partial<LunchSettings> | null | undefined => p.lunch as Partial<LunchSettings> | null | undefined;
  let lunch: LunchSettings | null = defaultPacingSettings.lunch;
  for (const l of [lunchOf(ws), lunchOf(mb)]) {
    if (l === null) lunch = null;
    else if (l !== undefined) lunch = { ...(lunch ?? (defaultPacingSettings.lunch as LunchSettings)), ...l };
  }
  const s: PacingSettings = {
    dayStart: mb.dayStart ?? ws.dayStart ?? defaultPacingSettings.dayStart,
    dayEnd: mb.dayEnd ?? ws.dayEnd ?? defaultPacingSettings.dayEnd,
    dayJitterMinutes: mb.dayJitterMinutes ?? ws.dayJitterMinutes ?? defaultPacingSettings.dayJitterMinutes,
    workDays: ((mb.workDays ?? ws.workDays ?? defaultPacingSettings.workDays) as Weekday[]).slice().sort((a, b) => a - b),
    lunch,
    gapMinutes: (mb.gapMinutes ?? ws.gapMinutes ?? defaultPacingSettings.gapMinutes) as [number, number],
    spreadDay: mb.spreadDay ?? ws.spreadDay ?? defaultPacingSettings.spreadDay,
    hourlyCeiling: (mb.hourlyCeiling ?? ws.hourlyCeiling ?? defaultPacingSettings.hourlyCeiling) as [number, number],
    pickupMinutes: mb.pickupMinutes ?? ws.pickupMinutes ?? defaultPacingSettings.pickupMinutes,
  };
  const problems: string[] = [];
  const start = toMinutes(s.dayStart);
  const end = toMinutes(s.dayEnd);
  // The jittered day must still be a day: at least an hour long whatever the draws.
  if (end - start - 2 * s.dayJitterMinutes < 60) {
    problems.push(`dayStart ${s.dayStart} to dayEnd ${s.dayEnd} with ±${s.dayJitterMinutes} min must leave at least an hour (and may not cross midnight)`);
  }
  if (start - s.dayJitterMinutes < 0 || end + s.dayJitterMinutes > 1440) {
    problems.push(`dayStart/dayEnd ± dayJitterMinutes must stay within the local day`);
  }
  if (problems.length) invalid(where, problems, { workspace: workspaceRaw, mailbox: mailboxRaw });
  return s;
}

export function compilePacing(s: PacingSettings): CompiledPacing {
  let dayMask = 0;
  for (const d of s.workDays) dayMask |= 1 << d;
  return {
    startMin: toMinutes(s.dayStart),
    endMin: toMinutes(s.dayEnd),
    jitterMin: s.dayJitterMinutes,
    dayMask,
    lunch: s.lunch
      ? { atMin: toMinutes(s.lunch.at), jitterMin: s.lunch.jitterMinutes, minMin: s.lunch.minutes[0], maxMin: s.lunch.minutes[1], probability: s.lunch.probability }
      : null,
    gapMinMs: Math.round(s.gapMinutes[0] * MINUTE_MS),
    gapMaxMs: Math.round(s.gapMinutes[1] * MINUTE_MS),
    spreadDay: s.spreadDay,
    hourlyMin: s.hourlyCeiling[0],
    hourlyMax: s.hourlyCeiling[1],
    pickupMs: Math.round(s.pickupMinutes * MINUTE_MS),
  };
}

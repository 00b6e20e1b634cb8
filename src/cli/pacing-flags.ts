import type { Command } from 'commander';
import { cadenzaError } from '../common/errors.ts';
import { parseWindow } from '../calendar/index.ts';
import type { PacingView } from '../mailbox/pacing/pacing-settings.ts';
import { parsePacingPatch, pacingKeys, type PacingPatch } from '../mailbox/pacing/pacing-patch.ts';

/**
 * The pacing flags of `mailbox add`, `mailbox set` and `workspace pacing`, turned into the one
 * pacing patch the API takes too (mailbox/pacing/pacing-patch.ts validates it). Pure: no store.
 */

export interface PacingFlags {
  dailyCap?: string;
  hourlyCap?: string;
  ramp?: string;
  gap?: string;
  gapMin?: string;
  gapMax?: string;
  hourlyCeiling?: string;
  days?: string;
  hours?: string;
  lunch?: string;
  lunchMinutes?: string;
  dayJitter?: string;
  pickup?: string;
  spreadDay?: string;
  humanTiming?: string;
  reset?: string;
}

export function addPacingOptions(cmd: Command): Command {
  return cmd
    .option('--daily-cap <n>', 'most emails a day once ramped up (default: the workspace\'s, else 30)')
    .option('--hourly-cap <n>', 'most emails in any hour, a hard ceiling')
    .option('--ramp <start:step[:target]|none>', 'ramp-up of a new mailbox, e.g. 5:3 (5 a day, 3 more each day) or 5:3:30; none: the cap from day one')
    .option('--gap <min-max>', 'gap between two sends, e.g. 30s-90s or 8m-15m')
    .option('--gap-min <duration>', 'shortest gap between two sends, e.g. 30s, 2m (with --gap-max)')
    .option('--gap-max <duration>', 'longest gap between two sends (with --gap-min)')
    .option('--hourly-ceiling <n|min-max>', "each day's ceiling of sends per rolling hour, drawn from min-max")
    .option('--days <days>', 'working days, e.g. mon-fri or mon,wed,fri')
    .option('--hours <HH:MM-HH:MM>', 'working hours in the mailbox\'s zone, e.g. 08:00-18:00')
    .option('--lunch <HH:MM|none>', 'usual lunch start, or none')
    .option('--lunch-minutes <min-max>', 'lunch length in minutes, e.g. 30-60')
    .option('--day-jitter <minutes>', "each day's start and end move by up to this many minutes")
    .option('--pickup <duration>', 'a due send leaves up to this long after it is due, e.g. 4m; 0: at once')
    .option('--spread-day <on|off>', "stretch gaps on a quiet day so the day's budget spreads over it (off: gaps stay within --gap)")
    .option('--human-timing <on|off>', 'off: no day jitter, no lunch, no pickup delay, no spreading (exact timing, minute-scale sequences); on: back to the defaults')
    .option('--reset <settings>', `comma-separated settings to inherit again: ${pacingKeys.join(', ')}`);
}

const bad = (flag: string, value: string, expected: string): never => {
  throw cadenzaError('INVALID_INPUT', `${flag} '${value}': expected ${expected}`, { field: flag });
};

/** '30s', '90 sec', '2m', '1.5min', '1h'; a bare number is minutes. In minutes. */
export function parseDuration(flag: string, v: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)?\s*$/i.exec(v);
  if (!m) return bad(flag, v, 'a duration such as 30s, 2m or 1h');
  const n = Number(m[1]);
  const unit = (m[2] ?? 'm').toLowerCase();
  return unit.startsWith('s') ? n / 60 : unit.startsWith('h') ? n * 60 : n;
}

function int(flag: string, v: string): number {
  if (!/^\s*\d+\s*$/.test(v)) return bad(flag, v, 'a whole number');
  return Number(v);
}

function pair<T>(flag: string, v: string, one: (s: string) => T): [T, T] {
  const parts = v.split(/\s*-\s*/);
  if (parts.length === 1) return [one(parts[0]!), one(parts[0]!)];
  if (parts.length !== 2) return bad(flag, v, 'min-max');
  return [one(parts[0]!), one(parts[1]!)];
}

function onOff(flag: string, v: string): boolean {
  if (/^(on|true|yes)$/i.test(v)) return true;
  if (/^(off|false|no)$/i.test(v)) return false;
  return bad(flag, v, 'on or off');
}

/** The patch the flags ask for; undefined when no pacing flag was given. */
export function patchFromFlags(o: PacingFlags): PacingPatch | undefined {
  const p: Record<string, unknown> = {};
  if (o.dailyCap !== undefined) p.dailyCap = int('--daily-cap', o.dailyCap);
  if (o.hourlyCap !== undefined) p.hourlyCap = int('--hourly-cap', o.hourlyCap);
  if (o.ramp !== undefined) {
    if (/^none$/i.test(o.ramp)) p.ramp = null;
    else {
      const parts = o.ramp.split(':');
      if (parts.length < 2 || parts.length > 3) bad('--ramp', o.ramp, 'start:step or start:step:target, e.g. 5:3:30, or none');
      const [start, step, target] = parts.map((x) => int('--ramp', x));
      p.ramp = { start, step, ...(target !== undefined ? { target } : {}) };
    }
  }
  if (o.gap !== undefined) p.gapMinutes = pair('--gap', o.gap, (s) => parseDuration('--gap', s));
  if (o.gapMin !== undefined || o.gapMax !== undefined) {
    if (o.gap !== undefined) bad('--gap-min/--gap-max', o.gapMin ?? o.gapMax ?? '', 'either --gap or --gap-min and --gap-max, not both');
    if (o.gapMin === undefined || o.gapMax === undefined) throw cadenzaError('INVALID_INPUT', 'give --gap-min and --gap-max together (or --gap 30s-90s)', { field: '--gap-min' });
    p.gapMinutes = [parseDuration('--gap-min', o.gapMin), parseDuration('--gap-max', o.gapMax)];
  }
  if (o.hourlyCeiling !== undefined) p.hourlyCeiling = pair('--hourly-ceiling', o.hourlyCeiling, (s) => int('--hourly-ceiling', s));
  if (o.days !== undefined) {
    let w;
    try {
      w = parseWindow(`${o.days} 09:00-17:00`);
    } catch {
      return bad('--days', o.days, 'days such as mon-fri or mon,wed,fri');
    }
    if (w.kind !== 'hours') return bad('--days', o.days, 'days such as mon-fri or mon,wed,fri');
    p.workDays = w.days;
  }
  if (o.hours !== undefined) {
    const m = /^\s*(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})\s*$/.exec(o.hours);
    if (!m) return bad('--hours', o.hours, 'HH:MM-HH:MM, e.g. 08:00-18:00');
    p.dayStart = m[1]!.padStart(5, '0');
    p.dayEnd = m[2]!.padStart(5, '0');
  }
  if (o.humanTiming !== undefined) {
    if (onOff('--human-timing', o.humanTiming)) p.reset = ['dayJitterMinutes', 'lunch', 'pickupMinutes', 'spreadDay'];
    else Object.assign(p, { dayJitterMinutes: 0, lunch: null, pickupMinutes: 0, spreadDay: false });
  }
  if (o.lunch !== undefined) {
    if (/^none$/i.test(o.lunch)) p.lunch = null;
    else p.lunch = { at: o.lunch.padStart(5, '0') };
  }
  if (o.lunchMinutes !== undefined) {
    if (p.lunch === null) bad('--lunch-minutes', o.lunchMinutes, 'no --lunch none with it');
    p.lunch = { ...((p.lunch as object | undefined) ?? {}), minutes: pair('--lunch-minutes', o.lunchMinutes, (s) => parseDuration('--lunch-minutes', s)) };
  }
  if (o.dayJitter !== undefined) p.dayJitterMinutes = parseDuration('--day-jitter', o.dayJitter);
  if (o.pickup !== undefined) p.pickupMinutes = parseDuration('--pickup', o.pickup);
  if (o.spreadDay !== undefined) p.spreadDay = onOff('--spread-day', o.spreadDay);
  if (o.reset !== undefined) p.reset = [...((p.reset as string[] | undefined) ?? []), ...o.reset.split(',').map((s) => s.trim()).filter(Boolean)];
  if (Object.keys(p).length === 0) return undefined;
  return parsePacingPatch(p);
}

const fmtMin = (m: number) => (m < 1 ? `${Math.round(m * 60)}s` : `${Math.round(m * 100) / 100}m`);

/** The settings in force, one a line, each with where it comes from. */
export function describePacing(v: PacingView): string {
  const e = v.effective;
  const from = (...keys: string[]) => {
    const set = (l: PacingView['own'] | undefined) => l && keys.some((k) => k in l.caps || k in l.pacing);
    return set(v.own) ? (v.inherited ? 'mailbox' : 'workspace') : set(v.inherited) ? 'workspace' : 'default';
  };
  const days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  const lines: Array<[string, string, string]> = [
    ['daily cap', String(e.dailyCap), from('dailyCap')],
    ['hourly cap', e.hourlyCap === null ? 'none' : String(e.hourlyCap), from('hourlyCap')],
    ['ramp', e.ramp ? `${e.ramp.start} a day, +${e.ramp.step} a day${e.ramp.target ? ` up to ${e.ramp.target}` : ''}` : 'none', from('ramp')],
    ['gap', `${fmtMin(e.gapMinutes[0])}-${fmtMin(e.gapMinutes[1])}`, from('gapMinutes')],
    ['spread quiet days', e.spreadDay ? 'on' : 'off', from('spreadDay')],
    ['hourly ceiling', `${e.hourlyCeiling[0]}-${e.hourlyCeiling[1]}`, from('hourlyCeiling')],
    ['days', e.workDays.map((d) => days[d - 1]).join(','), from('workDays')],
    ['hours', `${e.dayStart}-${e.dayEnd} ±${e.dayJitterMinutes}m`, from('dayStart', 'dayEnd', 'dayJitterMinutes')],
    ['lunch', e.lunch ? `${e.lunch.at} ±${e.lunch.jitterMinutes}m, ${e.lunch.minutes[0]}-${e.lunch.minutes[1]}m on ${Math.round(e.lunch.probability * 100)}% of days` : 'none', from('lunch')],
    ['pickup', fmtMin(e.pickupMinutes), from('pickupMinutes')],
  ];
  return lines.map(([k, val, src]) => `${k.padEnd(18)} ${val}${src === 'default' ? '' : `  (${src})`}`).join('\n');
}

/**
 * Send windows: parsing what users type ('Mon-Fri 08:30-17:30'), formatting them back, and
 * compiling a SendWindow into the numbers the hot path uses.
 */
import { cadenzaError } from '../common/errors.ts';
import type { SendWindow, Weekday } from './types.ts';

const DAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
const FULL_DAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
/** Used when a window names hours but no days. */
const DEFAULT_DAYS: Weekday[] = [1, 2, 3, 4, 5];

export interface CompiledWindow {
  /** Bit w set when a window slot opens on ISO weekday w. */
  readonly dayMask: number;
  /** Bit w set when weekday w counts as a business day ('any': Monday to Friday). */
  readonly businessMask: number;
  /** Minutes after local midnight. */
  readonly startMin: number;
  /** Minutes after local midnight of the opening day (crosses = false) or of the next day (crosses = true). */
  readonly endMin: number;
  readonly crosses: boolean;
}

const ALL_DAYS_MASK = 0b1111_1110;
const MON_FRI_MASK = 0b0011_1110;
const ANY: CompiledWindow = { dayMask: ALL_DAYS_MASK, businessMask: MON_FRI_MASK, startMin: 0, endMin: 1440, crosses: false };

function invalid(message: string, input: unknown): never {
  throw cadenzaError('INVALID_INPUT', `invalid send window: ${message}`, { field: 'window', input });
}

const HHMM = /^(\d{1,2}):(\d{2})$/;

/** Minutes after midnight of 'H:MM' / 'HH:MM'; '24:00' only where allowEnd. */
function parseTime(text: string, allowEnd: boolean, input: unknown): number {
  const m = HHMM.exec(text);
  if (m) {
    const h = Number(m[1]);
    const min = Number(m[2]);
    if (min < 60 && (h < 24 || (allowEnd && h === 24 && min === 0))) return h * 60 + min;
  }
  return invalid(`'${text}' is not a time of day (HH:MM, 00:00-23:59${allowEnd ? ', or 24:00 as an end' : ''})`, input);
}

function formatTime(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

function parseDayName(text: string, input: unknown): Weekday {
  const t = text.toLowerCase();
  const i = FULL_DAY_NAMES.findIndex((full) => full === t || (t.length >= 2 && full.startsWith(t)));
  if (i < 0) return invalid(`unknown day '${text}' (use Mon, Tue, Wed, Thu, Fri, Sat, Sun)`, input);
  return (i + 1) as Weekday;
}

function parseDay(value: unknown, input: unknown): Weekday {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 7) return value as Weekday;
  if (typeof value === 'string') return parseDayName(value.trim(), input);
  return invalid(`'${String(value)}' is not a weekday (1 = Monday … 7 = Sunday, or a name)`, input);
}

/** 'Mon-Fri', 'Mon,Wed,Fri', 'Sun-Thu', 'Fri-Mon' (ranges wrap through Sunday). */
function parseDayList(text: string, input: unknown): Weekday[] {
  const days = new Set<Weekday>();
  for (const token of text.split(/[\s,]+/).filter((t) => t !== '')) {
    const range = token.split('-');
    if (range.length === 1) {
      days.add(parseDayName(token, input));
    } else if (range.length === 2) {
      const from = parseDayName(range[0] as string, input);
      const to = parseDayName(range[1] as string, input);
      for (let d = from, n = 0; n < 7; d = ((d % 7) + 1) as Weekday, n++) {
        days.add(d);
        if (d === to) break;
      }
    } else {
      invalid(`'${token}' is not a day or a range of days`, input);
    }
  }
  return [...days].sort((a, b) => a - b);
}

function hoursWindow(days: Weekday[], start: number, end: number, input: unknown): SendWindow {
  if (days.length === 0) invalid('no days given', input);
  if (start === end) invalid('start and end are equal (use 00:00-24:00 for the whole day)', input);
  return { kind: 'hours', days: [...new Set(days)].sort((a, b) => a - b), start: formatTime(start), end: formatTime(end) };
}

/**
 * Reads a send window from text or from an object.
 *
 * Text: 'any', or '<days> <start>-<end>': 'Mon-Fri 08:30-17:30', 'Mon,Wed,Fri 09:00-12:00',
 * 'Sun-Thu 22:00-02:00' (crosses midnight). Day names are case-insensitive, English, short or full;
 * ranges wrap ('Fri-Mon'). Days alone ('Sat,Sun') mean the whole day; hours alone mean Mon-Fri.
 * Object: `{ days?, start?, end? }` with days as ISO numbers or names (default Mon-Fri), start
 * default '00:00', end default '24:00'; or an existing SendWindow, which is validated and normalised.
 * Throws CadenzaError('INVALID_INPUT') naming the problem.
 */
export function parseWindow(
  input: string | { kind?: string; days?: ReadonlyArray<Weekday | number | string>; start?: string; end?: string },
): SendWindow {
  if (typeof input === 'string') return parseWindowText(input);
  if (input === null || typeof input !== 'object') return invalid('expected a string or an object', input);
  if (input.kind === 'any') return { kind: 'any' };
  if (input.kind !== undefined && input.kind !== 'hours') return invalid(`unknown kind '${String(input.kind)}'`, input);
  if (input.days !== undefined && !Array.isArray(input.days)) return invalid('days must be a list', input);
  const days = input.days === undefined ? DEFAULT_DAYS : input.days.map((d) => parseDay(d, input));
  if (input.start !== undefined && typeof input.start !== 'string') return invalid('start must be HH:MM', input);
  if (input.end !== undefined && typeof input.end !== 'string') return invalid('end must be HH:MM', input);
  const start = input.start === undefined ? 0 : parseTime(input.start.trim(), false, input);
  const end = input.end === undefined ? 1440 : parseTime(input.end.trim(), true, input);
  return hoursWindow(days, start, end, input);
}

const WINDOW_TEXT = /^(.*?)\s*(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})$/;

function parseWindowText(input: string): SendWindow {
  const text = input.trim().replace(/[\u2012-\u2015]/g, '-').replace(/\s*-\s*/g, '-');
  if (text === '') return invalid("empty (use 'any' or e.g. 'Mon-Fri 08:30-17:30')", input);
  if (/^(any|always|24\/7)$/i.test(text)) return { kind: 'any' };
  const m = WINDOW_TEXT.exec(text);
  if (!m) {
    // Days only: the whole day on those days.
    if (/\d/.test(text)) return invalid(`cannot read '${input}' (expected e.g. 'Mon-Fri 08:30-17:30')`, input);
    return hoursWindow(parseDayList(text, input), 0, 1440, input);
  }
  const dayText = (m[1] as string).replace(/,$/, '');
  const days = dayText === '' ? DEFAULT_DAYS : parseDayList(dayText, input);
  return hoursWindow(days, parseTime(m[2] as string, false, input), parseTime(m[3] as string, true, input), input);
}

/** 'any' or 'Mon-Fri 08:30-17:30' / 'Mon,Wed,Fri 09:00-12:00'; parseWindow reads it back to the same window. */
export function formatWindow(window: SendWindow): string {
  if (window.kind === 'any') return 'any';
  const days = [...new Set(window.days)].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < days.length; ) {
    let j = i;
    while (j + 1 < days.length && (days[j + 1] as number) === (days[j] as number) + 1) j++;
    const first = DAY_NAMES[(days[i] as number) - 1] as string;
    const last = DAY_NAMES[(days[j] as number) - 1] as string;
    if (j - i >= 2) runs.push(`${first}-${last}`);
    else for (let k = i; k <= j; k++) runs.push(DAY_NAMES[(days[k] as number) - 1] as string);
    i = j + 1;
  }
  return `${runs.join(',')} ${window.start}-${window.end}`;
}

const STRICT_HHMM = /^(\d{2}):(\d{2})$/;

function strictTime(text: unknown, allowEnd: boolean, window: unknown): number {
  const m = typeof text === 'string' ? STRICT_HHMM.exec(text) : null;
  if (!m) return invalid(`'${String(text)}' is not HH:MM`, window);
  return parseTime(text as string, allowEnd, window);
}

/**
 * The hot-path form of a SendWindow. Validates the shape (a window with no days is accepted here;
 * nextAllowed reports that nothing is ever allowed).
 */
export function compileWindow(window: SendWindow): CompiledWindow {
  if (window === null || typeof window !== 'object') return invalid('expected a SendWindow', window);
  if (window.kind === 'any') return ANY;
  if (window.kind !== 'hours') return invalid(`unknown kind '${String((window as { kind: unknown }).kind)}'`, window);
  if (!Array.isArray(window.days)) return invalid('days must be a list', window);
  let dayMask = 0;
  for (const d of window.days) {
    if (!Number.isInteger(d) || d < 1 || d > 7) return invalid(`'${String(d)}' is not an ISO weekday (1-7)`, window);
    dayMask |= 1 << d;
  }
  const startMin = strictTime(window.start, false, window);
  const endMin = strictTime(window.end, true, window);
  if (startMin === endMin) return invalid('start and end are equal (use 00:00-24:00 for the whole day)', window);
  return { dayMask, businessMask: dayMask, startMin, endMin, crosses: endMin < startMin };
}

import { DateTime } from 'luxon';
import { TOMORROW, alternation, monthByName, weekdayByName } from './calendar-words.ts';
import { TEXT_LIMITS } from '../../parse/limits.ts';

/**
 * The return date stated in an out-of-office note, read against the day the note was written.
 *
 * A date counts only when a cue ties it to the return, and the cue says how:
 *   - "back on X" / "de retour le X" / "X より出社": back on X (an explicit return; the first wins);
 *   - English "until X" / "till X": back on X ("out until Monday" means back on Monday);
 *   - "through X", "until and including X", a range's end ("Dec 21 - Jan 1", "du 21 au 31"), and
 *     the other languages' "bis X" / "jusqu'au X" / "hasta X" / "fino al X" / "t/m X" / "X まで",
 *     which their writers mean inclusively: back the next business day after X;
 *   - "starting X" / "ab X" / "à partir du X" / "vanaf X": the absence's first day, unless the same
 *     sentence says it is the return ("ab dem 7. Dezember bin ich wieder erreichbar").
 * An explicit return outranks the other cues wherever it is. Dates without a cue (a phone number,
 * a deadline) are ignored. A return date must fall on or after the note's day and within about six
 * months; a date without a year is the next one on or after the note's day; n/n dates are read in
 * the order the language writes them, and for English (where both orders are in use) as the
 * earliest plausible one.
 */

export interface ReturnDate {
  /** Epoch ms of that day's start in UTC. */
  date: number;
  /** The words that stated it, for the classification's reason. */
  evidence: string;
}

/** How a reader of this note orders day and month in n/n dates. */
type Order = 'mdy-or-dmy' | 'dmy' | 'mdy';

const MAX_AHEAD_DAYS = 184;
// Word edges that work for accented words; Chinese and Japanese have no spaces, so no edge there.
const L = '(?<![\\p{Script=Latin}\\p{N}])';
const R = '(?![\\p{Script=Latin}\\p{N}])';

const MONTH = `(?<month>${alternation(monthByName.keys())})\\.?`;
const WEEKDAY = alternation(weekdayByName.keys());
const YEAR = '(?<year>\\d{4})';
const DAY = '(?<day>[0-3]?\\d)';

interface Pattern {
  re: RegExp;
  kind: 'ymd' | 'dmy-name' | 'numeric' | 'md-cjk' | 'weekday' | 'tomorrow' | 'ordinal';
}

const patterns: Pattern[] = [
  { kind: 'ymd', re: new RegExp(`(?<![\\d])(?<year>\\d{4})(?:-|/|年)\\s*(?<month>[01]?\\d)(?:-|/|月)\\s*(?<day>[0-3]?\\d)(?:日|号)?(?!\\d)`, 'gu') },
  { kind: 'md-cjk', re: new RegExp(`(?<![\\d])(?<month>[01]?\\d)\\s*月\\s*(?<day>[0-3]?\\d)\\s*(?:日|号)`, 'gu') },
  // 3 December, 3rd of December, 3. Dezember, 3 de diciembre, 3 grudnia 2026
  {
    kind: 'dmy-name',
    re: new RegExp(`${L}${DAY}(?:st|nd|rd|th|er|º|°|\\.)?\\s*(?:of\\s+|de\\s+|di\\s+|d['’])?${MONTH}${R}(?:,?\\s*(?:de\\s+)?${YEAR}${R})?`, 'giu'),
  },
  // December 3, Dec 3rd, 2026
  {
    kind: 'dmy-name',
    re: new RegExp(`${L}${MONTH}${R}\\s*(?:the\\s+)?${DAY}(?:st|nd|rd|th)?(?!\\d)(?:,?\\s*${YEAR}${R})?`, 'giu'),
  },
  // 03.12.2026, 3.12., 12/03, 3-12-26
  {
    kind: 'numeric',
    re: /(?<![\d./-])(?<a>[0-3]?\d)(?<sep>[./-])(?<b>[01]?\d)(?:\k<sep>(?<year>\d{4}|\d{2})(?![\d]))?(?![\d/-]|\.\d)/gu,
  },
  { kind: 'weekday', re: new RegExp(`${L}(?<weekday>${WEEKDAY})${R}`, 'giu') },
  { kind: 'tomorrow', re: new RegExp(`${L}(?:${alternation(TOMORROW)})${R}`, 'giu') },
  // after the 5th, on the 12th
  { kind: 'ordinal', re: new RegExp(`${L}(?:the\\s+)?${DAY}(?:st|nd|rd|th)${R}`, 'giu') },
];

/** on: back that day; until: English "until", back that day but outranked by an explicit return; through: back the next business day; from: start of the absence unless the sentence says return. */
type Mode = 'on' | 'until' | 'through' | 'from';

/** Words right before a date that say what the date is. Each list is per language, most specific first. */
const BEFORE: Array<{ mode: Mode; words: string[] }> = [
  {
    mode: 'on',
    words: [
      // en
      'back', 'return', 'returning', 'returns', 'will return', 'will not return until', 'will not be back until', 'in the office', 'available again', 'available from', 'available on',
      'reachable again',
      // de
      'zurück', 'zurueck', 'wieder',
      // fr
      'retour', 'de retour', 'reviendrai', 'rentrerai', 'reprendrai', 'reprise',
      // es
      'vuelta', 'regreso', 'regresaré', 'regresare', 'volveré', 'volvere', 'vuelvo', 'reincorporaré', 'me reincorporo',
      // it
      'ritorno', 'rientro', 'rientrerò', 'rientrero', 'tornerò', 'tornero', 'di nuovo in ufficio',
      // pt
      'volta', 'regresso', 'retorno', 'retornarei', 'voltarei', 'regressarei',
      // nl
      'terug', 'weer aanwezig', 'weer op kantoor', 'weer bereikbaar',
      // sv, da, no
      'tillbaka', 'åter', 'tilbage', 'tilbake', 'igen', 'igjen',
      // pl
      'wracam', 'powrotu', 'powrocie', 'z powrotem', 'będę dostępny od', 'będę dostępna od',
      // zh
      '将于', '將於', '于', '於',
    ],
  },
  { mode: 'until', words: ['until', 'till', 'til', 'untill'] },
  {
    mode: 'through',
    words: [
      'through', 'thru', 'up to and including', 'until and including', 'after',
      'bis', 'bis zum', 'bis einschließlich', 'bis einschliesslich', 'bis inkl.', 'bis inklusive', 'bis am', 'nach dem',
      "jusqu'au", 'jusqu’au', "jusqu'à", 'jusqu’à', "jusqu'a", 'après le',
      'hasta', 'hasta el', 'después del',
      'fino al', 'fino a', "fino all'", 'fino all’', 'dopo il',
      'até', 'até ao', 'até o', 'até dia', 'ate',
      'tot', 'tot en met', 't/m',
      'till och med', 't.o.m.', 't.o.m', 'til og med',
      'do', 'do dnia',
      '至', '到', '直至', '直到',
    ],
  },
  {
    mode: 'from',
    words: [
      'starting', 'starting on', 'beginning', 'as of', 'from', 'effective',
      'ab', 'ab dem', 'ab den', 'seit',
      'à partir du', 'à partir de', 'a partir du', 'à compter du', 'dès le', 'dès',
      'a partir del', 'desde el', 'desde',
      'a partire dal', 'a partire da', 'dal',
      'a partir de', 'a partir do', 'a partir da',
      'vanaf',
      'från och med', 'fra og med',
      'od',
    ],
  },
];

/** In the sentence of a "from" date, words that make it the return ("ab dem 7. bin ich wieder erreichbar"). */
const RETURN_WORDS = new RegExp(
  `${L}(?:${alternation([
    'back', 'return', 'returning', 'available', 'reachable', 'in the office', 'in office',
    'wieder', 'zurück', 'erreichbar', 'im büro', 'im hause',
    'de retour', 'disponible', 'joignable', 'au bureau',
    'de vuelta', 'en la oficina', 'localizable',
    'di nuovo', 'disponibile', 'rientro', 'in ufficio', 'reperibile',
    'de volta', 'disponível', 'no escritório',
    'weer', 'terug', 'bereikbaar', 'aanwezig', 'op kantoor',
    'tillbaka', 'på plats', 'tilbage', 'tilbake', 'på kontoret',
    'dostępny', 'dostępna', 'w biurze',
  ])})${R}`,
  'iu',
);
/** "will not return", "nicht im Büro": a return word within three words of a negation says the opposite. */
const NEGATIONS = new Set(['not', "n't", 'nicht', 'pas', 'no', 'niet', 'non', 'não', 'nao', 'inte', 'ikke', 'nie', 'won’t', "won't"]);

function negated(before: string): boolean {
  return before.trimEnd().toLowerCase().split(/\s+/).slice(-3).some((w) => NEGATIONS.has(w) || w.endsWith("n't") || w.endsWith('n’t'));
}

/** "X inclusive": the day X is still away. */
const INCLUSIVE_AFTER = /^\s*\(?(?:inclusive|inclusively|included|inclus|incluse|inclusivement|incluso|inclusive|compreso|compresa|incluído|incluido|inclusief|inklusive|einschließlich|inkl\.)(?![\p{L}])/iu;

function cueRegex(words: string[]): RegExp {
  // The cue, then at most a few words without sentence punctuation, then the date; the date may
  // open the next line when the cue ends one (Lotus Notes: "will not return until\n06/14/2002").
  return new RegExp(`${L}(?:${alternation(words)})${R}(?<gap>[^.!?;\\n。！？]{0,32}(?:\\n[ \\t]{0,8})?)$`, 'iu');
}
const beforeCues = BEFORE.map((c) => ({ mode: c.mode, re: cueRegex(c.words) }));

/** "du 20 au 30 novembre", "vom 20. bis 30.12.", "25–29 May": the second date of a range ends the absence. */
const RANGE_BEFORE = new RegExp(`${L}[0-3]?\\d(?:st|nd|rd|th|er|º|°|\\.)?\\s*(?:(?:${alternation(monthByName.keys())})\\.?\\s*)?(?:-|–|—|~|〜|au|al|a|bis|tot|till|til|to|do|through)\\s*$`, 'iu');

/** Cues after the date: Japanese and Chinese put them there, German and Dutch often do. */
const AFTER: Array<{ mode: Mode; re: RegExp }> = [
  // A weekday in brackets may sit between: 12/3(木)まで, 12月7日（周一）返回.
  { mode: 'through', re: /^\s*(?:[(（][^)）]{1,4}[)）])?\s*(?:まで|迄|止|为止|為止)/u },
  { mode: 'on', re: /^\s*(?:[(（][^)）]{1,4}[)）])?\s*(?:より|から|起|开始|開始)?\s*(?:出社|戻り|戻ります|復帰|通常業務|返回|回来|回來|回到|恢复|恢復|上班|返岗|返崗)/u },
  { mode: 'on', re: /^\.?[,\s]*(?:bin ich|ich bin|ben ik|je serai|i will be|i'll be|i’ll be)?\s*(?:wieder|zurück|weer|terug|de retour|back)(?![\p{L}])/iu },
];

interface Found {
  start: number;
  end: number;
  kind: Pattern['kind'];
  groups: Record<string, string | undefined>;
}

function findDates(text: string): Found[] {
  const all: Found[] = [];
  for (const p of patterns) {
    p.re.lastIndex = 0;
    for (const m of text.matchAll(p.re)) all.push({ start: m.index, end: m.index + m[0].length, kind: p.kind, groups: { ...m.groups } });
  }
  // Longest match wins where they overlap ("3 December 2026" over "3 December").
  all.sort((a, b) => a.start - b.start || b.end - b.start - (a.end - a.start));
  const kept: Found[] = [];
  for (const f of all) {
    const last = kept[kept.length - 1];
    if (last && f.start < last.end) continue;
    // "Monday, 7 December", "Wednesday. January 2, 2002": the weekday only introduces the date;
    // read the date, cue from the weekday.
    if (last && last.kind === 'weekday' && /^[,.\s]*(?:the\s+|den\s+|le\s+|el\s+|il\s+|de\s+|dem\s+)?$/iu.test(text.slice(last.end, f.start))) {
      kept[kept.length - 1] = { ...f, start: last.start };
      continue;
    }
    kept.push(f);
  }
  return kept;
}

type Reading = { mode: 'on' | 'until' | 'through'; from: number };

function cueFor(text: string, f: Found): Reading | null {
  const before = text.slice(Math.max(0, f.start - 60), f.start);
  const offset = f.start - before.length;
  const range = RANGE_BEFORE.exec(before);
  if (range) return { mode: 'through', from: offset + range.index };
  let best: { mode: Mode; from: number; gap: number } | null = null;
  for (const c of beforeCues) {
    const m = c.re.exec(before);
    if (!m) continue;
    const gap = m.groups!.gap!.length;
    if (!best || gap < best.gap) best = { mode: c.mode, from: offset + m.index, gap };
  }
  if (best?.mode === 'from') return startIsReturn(text, f, best.from) ? { mode: 'on', from: best.from } : null;
  if (best) return { mode: best.mode === 'until' && INCLUSIVE_AFTER.test(text.slice(f.end, f.end + 20)) ? 'through' : best.mode, from: best.from };
  const after = text.slice(f.end, f.end + 40);
  for (const c of AFTER) if (c.re.test(after)) return { mode: c.mode === 'from' ? 'on' : c.mode, from: f.start };
  return null;
}

/**
 * "ab dem 7. Dezember bin ich wieder erreichbar", "back in the office starting Monday": a
 * "from" date is the return when its sentence says so, before the cue or after the date (up to
 * the sentence's end, unless another number comes first), and not negated.
 */
function startIsReturn(text: string, f: Found, cueAt: number): boolean {
  const head = text.slice(Math.max(0, cueAt - 80), cueAt);
  const sentenceStart = Math.max(head.lastIndexOf('.'), head.lastIndexOf('!'), head.lastIndexOf('?'), head.lastIndexOf('\n'));
  // German ends a numeric date with a dot ("ab dem 14.12. wieder"). A tail that runs into another
  // number belongs to that date ("starting 12/01 and returning 12/14").
  const tail = text.slice(f.end, f.end + 80).replace(/^\./, '');
  const stop = tail.search(/[.!?\d]/u);
  const own = stop >= 0 && /\d/.test(tail[stop]!) ? '' : stop < 0 ? tail : tail.slice(0, stop);
  return [head.slice(sentenceStart + 1), own].some((part) => {
    const m = RETURN_WORDS.exec(part);
    return m !== null && !negated(part.slice(0, m.index));
  });
}

/** The first weekday after `day` (Saturday and Sunday skipped). */
function nextBusinessDay(day: DateTime): DateTime {
  let d = day.plus({ days: 1 });
  while (d.weekday > 5) d = d.plus({ days: 1 });
  return d;
}

/** The candidate days a found date may mean, in the order to prefer them. */
function candidates(f: Found, ref: DateTime, order: Order): DateTime[] {
  const g = f.groups;
  const ymd = (y: number | null, m: number, d: number): DateTime[] => {
    const years = y === null ? [ref.year, ref.year + 1] : [y < 100 ? 2000 + y : y];
    return years.map((yy) => DateTime.utc(yy, m, d)).filter((dt) => dt.isValid);
  };
  const year = g.year ? Number(g.year) : null;
  switch (f.kind) {
    case 'ymd':
    case 'md-cjk':
      return ymd(year, Number(g.month), Number(g.day));
    case 'dmy-name':
      return ymd(year, monthByName.get(g.month!.toLowerCase())!, Number(g.day));
    case 'numeric': {
      const a = Number(g.a);
      const b = Number(g.b);
      // A dot is the European day.month.; a slash or dash depends on who wrote it.
      const dmy = ymd(year, b, a);
      const mdy = ymd(year, a, b);
      if (g.sep === '.') return dmy;
      if (order === 'mdy') return [...mdy, ...dmy];
      if (order === 'dmy') return [...dmy, ...mdy];
      return [...mdy, ...dmy].sort((x, y) => x.toMillis() - y.toMillis());
    }
    case 'weekday': {
      const wd = weekdayByName.get(g.weekday!.toLowerCase())!;
      const ahead = ((wd - ref.weekday + 7) % 7) || 7;
      return [ref.plus({ days: ahead })];
    }
    case 'tomorrow':
      return [ref.plus({ days: 1 })];
    case 'ordinal': {
      const d = Number(g.day);
      return [0, 1, 2].map((k) => ref.plus({ months: k }).set({ day: d })).filter((dt) => dt.isValid && dt.day === d && dt >= ref);
    }
  }
}

function orderOf(text: string): Order {
  if (/[\u3040-\u30ff\u4e00-\u9fff]/u.test(text)) return 'mdy';
  if (/\b(?:the|until|back|office|will|i am|i'm|return(?:ing)?)\b/i.test(text)) return 'mdy-or-dmy';
  return 'dmy';
}

/**
 * The return date stated in `text` (subject and new text of the note), relative to `reference`
 * (epoch ms: the mail's Date), or null when none is stated plausibly.
 */
export function extractReturnDate(fullText: string, reference: number): ReturnDate | null {
  // The date is stated in the opening; every pass below is bounded by this cap (TEXT_LIMITS).
  const text = fullText.slice(0, TEXT_LIMITS.returnDateChars);
  const ref = DateTime.fromMillis(reference, { zone: 'utc' }).startOf('day');
  const latest = ref.plus({ days: MAX_AHEAD_DAYS });
  const order = orderOf(text);
  let implied: ReturnDate | null = null;
  for (const f of findDates(text)) {
    const cue = cueFor(text, f);
    if (!cue) continue;
    for (const day of candidates(f, ref, order)) {
      const back = cue.mode === 'through' ? nextBusinessDay(day) : day;
      if (back < ref || back > latest) continue;
      const found = { date: back.toMillis(), evidence: text.slice(cue.from, f.end).replace(/\s+/g, ' ').trim() };
      // "back on" says it outright; "until" and "through" only imply it, so a later "back on" wins.
      if (cue.mode === 'on') return found;
      implied ??= found;
      break;
    }
  }
  return implied;
}

/**
 * Whether `text` names a calendar day ("November 1st", "12/03", "2026-12-01", "tomorrow"), weekdays
 * and "the 5th" left out: an absence sentence that names its days but no return announces time off.
 */
export function namesDay(text: string): boolean {
  return findDates(text).some((f) => f.kind !== 'weekday' && f.kind !== 'ordinal');
}

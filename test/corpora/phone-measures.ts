import { readFileSync } from 'node:fs';
import path from 'node:path';
import { normalizePhone, type PhoneType, type PhoneVerdict } from '../../src/leads/phone.ts';
import { CORPORA, corporaHave } from './location.ts';

/**
 * The production phone normaliser (src/leads/phone.ts) over the shared corpus `phone-e164.jsonl`
 * (README there): inputs and regions from libphonenumber-js's own parse tests and each territory's
 * example numbers, with the E.164 form they expect, null meaning "not a valid number". Shared by
 * the corpus test (src/leads/phone.corpus.test.ts) and the benchmark (bench/phone-e164.ts).
 */

export const PHONE_CORPUS = 'phone-e164.jsonl';

export function phoneCorpusPresent(): boolean {
  return corporaHave(PHONE_CORPUS);
}

export interface PhoneRow {
  input: string;
  region: string | null;
  expected_e164: string | null;
  expected_country: string | null;
  source: string;
  /** metadata-exampleNumber rows: the type the example stands for (fixedLine, mobile, tollFree…). */
  number_type?: string;
}

export function readPhoneCorpus(): PhoneRow[] {
  return readFileSync(path.join(CORPORA, PHONE_CORPUS), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as PhoneRow);
}

/**
 * What a row's expected_e164 is compared with: the E.164 form of a VALID number, else null. A
 * flagged 'not_valid' number keeps its E.164 form in the lead (phone.ts), but the corpus's null
 * means "not a valid number", which is what 'flagged' says.
 */
export function verdictE164(v: PhoneVerdict): string | null {
  return v.status === 'valid' ? v.e164 : null;
}

export interface Confusion {
  input: string;
  region: string | null;
  source: string;
  expected: string | null;
  got: string | null;
  reason: string | null;
}

export interface PhoneFigures {
  rows: number;
  agree: number;
  bySource: Record<string, { rows: number; agree: number }>;
  /** Example numbers (the rows with a number_type) whose type agrees; fixed-line-or-mobile counts for either. */
  types: { rows: number; agree: number };
  confusions: Confusion[];
}

/** The corpus's camelCase type names for ours. */
const CORPUS_TYPE: Record<PhoneType, string> = {
  mobile: 'mobile',
  'fixed-line': 'fixedLine',
  'fixed-line-or-mobile': 'fixedLineOrMobile',
  'toll-free': 'tollFree',
  'premium-rate': 'premiumRate',
  'shared-cost': 'sharedCost',
  voip: 'voip',
  'personal-number': 'personalNumber',
  pager: 'pager',
  uan: 'uan',
  voicemail: 'voicemail',
};

function typeAgrees(expected: string, got: PhoneType | null): boolean {
  if (got === null) return false;
  if (got === 'fixed-line-or-mobile') return expected === 'fixedLine' || expected === 'mobile';
  return CORPUS_TYPE[got] === expected;
}

/** Each row read with its region as the lead's country and no workspace country, as the corpus gives it. */
export function measurePhones(rows: readonly PhoneRow[]): PhoneFigures {
  const f: PhoneFigures = { rows: rows.length, agree: 0, bySource: {}, types: { rows: 0, agree: 0 }, confusions: [] };
  for (const r of rows) {
    const v = normalizePhone(r.input, r.region);
    const got = verdictE164(v);
    const s = (f.bySource[r.source] ??= { rows: 0, agree: 0 });
    s.rows++;
    if (got === r.expected_e164) {
      f.agree++;
      s.agree++;
    } else {
      f.confusions.push({ input: r.input, region: r.region, source: r.source, expected: r.expected_e164, got, reason: v.reason });
    }
    if (r.number_type) {
      f.types.rows++;
      if (typeAgrees(r.number_type, v.type)) f.types.agree++;
    }
  }
  return f;
}

const pct = (ok: number, n: number) => (n === 0 ? 'n/a' : `${((100 * ok) / n).toFixed(1)}%`);

/** The figures as lines for people: agreement overall and per source, types, then every confusion. */
export function formatPhoneFigures(f: PhoneFigures): string {
  return [
    `exact E.164 agreement: ${f.agree}/${f.rows} (${pct(f.agree, f.rows)})`,
    ...Object.entries(f.bySource).map(([source, s]) => `  ${source}: ${s.agree}/${s.rows} (${pct(s.agree, s.rows)})`),
    `number type of the example numbers: ${f.types.agree}/${f.types.rows} (${pct(f.types.agree, f.types.rows)})`,
    `confusions (${f.confusions.length}): input, region, expected, got, reason`,
    ...f.confusions.map((c) => `  ${JSON.stringify(c.input)}  ${c.region ?? '-'}  ${c.expected ?? 'null'}  ${c.got ?? 'null'}  ${c.reason ?? ''}  [${c.source}]`),
  ].join('\n');
}

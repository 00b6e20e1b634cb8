import { describe, expect, it } from 'vitest';
import { formatPhoneFigures, measurePhones, phoneCorpusPresent, readPhoneCorpus } from '../../test/corpora/phone-measures.ts';

/**
 * The phone normaliser on the shared corpus (../shared/corpora/phone-e164.jsonl, README there):
 * inputs from libphonenumber-js's parse tests and every territory's example numbers, with the E.164
 * form expected (null: not a valid number). About 40% of the rows are held back and measured
 * elsewhere the same way, so nothing here is tuned to a row.
 *
 * The floors are what the normaliser measured with libphonenumber-js 1.13.16 (docs/benchmarks.md,
 * "Phone numbers to E.164"), as shares of the rows: a change that reads fewer rows right fails here. The rows it misses
 * are the library's newer metadata disagreeing with the corpus's older one (Benin's 2024 move to
 * ten digits; two numbers the old metadata called valid), listed when the test runs.
 */
const FLOOR = { all: 666 / 670, 'parse-test': 20 / 22, 'metadata-exampleNumber': 646 / 648, types: 646 / 648 } as const;

const share = (r: { agree: number; rows: number } | undefined) => (r && r.rows > 0 ? r.agree / r.rows : 0);

describe.skipIf(!phoneCorpusPresent())('phone numbers to E.164 on the shared corpus (skipped when ../shared/corpora is absent)', () => {
  it('agrees with the expected E.164 form at least as often as measured', () => {
    const f = measurePhones(readPhoneCorpus());
    process.stdout.write(`\nPhone numbers to E.164 (npx vitest run src/leads/phone.corpus.test.ts)\n\n${formatPhoneFigures(f)}\n\n`);
    expect(f.rows).toBeGreaterThan(0);
    expect(share(f)).toBeGreaterThanOrEqual(FLOOR.all);
    expect(share(f.bySource['parse-test'])).toBeGreaterThanOrEqual(FLOOR['parse-test']);
    expect(share(f.bySource['metadata-exampleNumber'])).toBeGreaterThanOrEqual(FLOOR['metadata-exampleNumber']);
    expect(share(f.types)).toBeGreaterThanOrEqual(FLOOR.types);
  });
});

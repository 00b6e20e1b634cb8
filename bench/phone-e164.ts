/**
 * Phone numbers to E.164: the production normaliser (src/leads/phone.ts) over every row of the
 * shared corpus ../shared/corpora/phone-e164.jsonl (or CADENZA_CORPORA), then its throughput.
 *
 * Agreement: a row agrees when the normaliser's E.164 form of a VALID number equals the row's
 * expected_e164, a flagged number counting as null ("not a valid number", the corpus's null);
 * split by the row's source (libphonenumber-js's parse tests, each territory's example numbers),
 * with the example numbers' types, and every confusion listed.
 *
 * Throughput: numbers per second over the corpus's inputs, `passes` times per round, in interleaved
 * rounds with an anchor measured in the same rounds: libphonenumber-js's bare
 * parsePhoneNumberFromString (max metadata) on the same inputs and regions, which is the floor of
 * the work (the normaliser adds the verdict: isValid, the type, the length reason, the search for a
 * second number when digits are left over). Reported as a ratio round by round.
 *   npm run bench -- phone-e164 [--rounds=7] [--passes=20]
 */
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import { normalizePhone } from '../src/leads/phone.ts';
import { CORPORA } from '../test/corpora/location.ts';
import { formatPhoneFigures, measurePhones, phoneCorpusPresent, readPhoneCorpus } from '../test/corpora/phone-measures.ts';
import { intFlag } from './lib/args.ts';
import { describeLoad, interleavedRounds, loadFigures, machineLoad, showSpread, spreadFigures } from './lib/rounds.ts';

type Case = 'normalizer' | 'bare_parse';

export default async function phoneE164Bench(args: string[]): Promise<Record<string, unknown>> {
  const rounds = intFlag(args, 'rounds', 7);
  const passes = intFlag(args, 'passes', 20);
  if (!phoneCorpusPresent()) throw new Error(`the corpus is needed: ${CORPORA}/phone-e164.jsonl (../shared/corpora, or CADENZA_CORPORA)`);
  const rows = readPhoneCorpus();

  const f = measurePhones(rows);
  console.log(`Phone numbers to E.164 on ${rows.length} corpus rows\n`);
  console.log(formatPhoneFigures(f));
  console.log('');

  const inputs = rows.map((r) => r.input);
  const regions = rows.map((r) => r.region);
  const numbers = inputs.length * passes;
  // Kept so that neither loop's work can be dropped as dead code.
  let sink = 0;
  const before = machineLoad();
  console.log(`throughput: ${numbers.toLocaleString('en')} numbers a round (${passes} passes), ${rounds} rounds; ${describeLoad(before)}`);
  const r = await interleavedRounds<Case>({
    rounds,
    cases: ['normalizer', 'bare_parse'],
    run(c) {
      const t = performance.now();
      for (let p = 0; p < passes; p++) {
        for (let i = 0; i < inputs.length; i++) {
          if (c === 'normalizer') sink += normalizePhone(inputs[i]!, regions[i]!).status === 'valid' ? 1 : 0;
          else sink += parsePhoneNumberFromString(inputs[i]!, (regions[i] ?? undefined) as CountryCode | undefined) ? 1 : 0;
        }
      }
      return { numbers_per_s: numbers / ((performance.now() - t) / 1000) };
    },
    onRound: (i, x) => console.log(`round ${i + 1}: normaliser ${Math.round(x.normalizer.numbers_per_s!).toLocaleString('en')}/s, bare parse ${Math.round(x.bare_parse.numbers_per_s!).toLocaleString('en')}/s`),
  });
  const after = machineLoad();
  if (sink === 0) throw new Error('nothing parsed');
  const fmt = (x: number) => Math.round(x).toLocaleString('en');
  const ratio = r.ratio('normalizer', 'bare_parse', 'numbers_per_s');
  console.log(`normaliser:  ${showSpread(r.spread('normalizer', 'numbers_per_s'), fmt)} numbers/s`);
  console.log(`bare parse:  ${showSpread(r.spread('bare_parse', 'numbers_per_s'), fmt)} numbers/s (anchor: parsePhoneNumberFromString, max metadata)`);
  console.log(`normaliser / bare parse: ${showSpread(ratio)}`);
  console.log(`load after: ${describeLoad(after)}`);

  const share = (ok: number, n: number) => (n === 0 ? null : Math.round((ok / n) * 10_000) / 10_000);
  const parse = f.bySource['parse-test'] ?? { rows: 0, agree: 0 };
  const examples = f.bySource['metadata-exampleNumber'] ?? { rows: 0, agree: 0 };
  return {
    rows: f.rows,
    agree: f.agree,
    agreement: share(f.agree, f.rows),
    parse_test_rows: parse.rows,
    parse_test_agree: parse.agree,
    example_rows: examples.rows,
    example_agree: examples.agree,
    type_rows: f.types.rows,
    type_agree: f.types.agree,
    confusions: f.confusions.length,
    confusion_list: f.confusions.map((c) => ({ input: c.input, region: c.region, expected: c.expected, got: c.got, reason: c.reason })),
    rounds,
    passes,
    ...loadFigures(before, after),
    ...spreadFigures('normalizer_per_s', r.spread('normalizer', 'numbers_per_s'), 0),
    ...spreadFigures('bare_parse_per_s', r.spread('bare_parse', 'numbers_per_s'), 0),
    ...spreadFigures('normalizer_over_bare_parse', ratio, 3),
  };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, type ApiHarness } from '../../test/api.ts';
import { accuracyRun, readingClock } from '../../test/analytics-accuracy.ts';
import { testBackends } from '../../test/stores.ts';

/**
 * Issue 18: a seeded world with known truth and the analytics API agree to the unit. Each run is a
 * whole simulation (sim/simulation.ts: the real engine, outbox, dispatcher and ingestion, with
 * crashes between send and record, replies, bounces, unsubscribes, meetings) over a week the
 * clocks change, with the analytics' rollup folded at random moments during the run and between
 * the reads; then the API is asked, as a member asks it, for the headline, the days, the CSV and
 * every breakdown in five zones (UTC, New York, Berlin, Kolkata, Lord Howe), and each figure is compared with the world's own log
 * (sim/world-log.ts), counted by the rules sim/world-figures.ts states (possibly-sent copies count
 * as sends; replies and bounces an ended enrollment ignored do not count).
 *
 * `npm run bench -- analytics-accuracy --seeds N` runs more seeds (docs/benchmarks.md).
 */

export const ACCURACY_RUNS = [
  { seed: 18_001, start: Date.UTC(2026, 2, 5, 13), days: 7, about: "America's spring forward (8 March 2026)" },
  { seed: 18_006, start: Date.UTC(2026, 2, 27, 7), days: 10, about: "Europe's spring forward (29 March) and Lord Howe's half hour back (5 April)" },
  { seed: 18_006, start: Date.UTC(2026, 9, 23, 20), days: 10, about: "Europe's fall back (25 October) and America's (1 November)" },
] as const;

describe.each(testBackends())('analytics against a simulated world (%s)', (backend) => {
  const clock = readingClock();
  let h: ApiHarness;
  beforeAll(async () => {
    h = await apiHarness(backend, {}, { clock, sender: false });
  });
  afterAll(() => h?.close());

  const compare = (run: { seed: number; start: number; days: number }) => accuracyRun(h, clock, run);

  it.each(ACCURACY_RUNS)('agrees to the unit over $about (seed $seed)', async (run) => {
    const { r, res, folds } = await compare(run);
    expect(res.mismatches).toEqual([]);
    // Every email that left was recorded (simulation invariant 6), so none is missing from the count.
    expect(r.log.facts.filter((f) => Number.isNaN(f.readAt))).toEqual([]);
    // A world that did little proves little: it sent, was answered, and the rollup folded.
    expect(r.log.count('sends')).toBeGreaterThan(10);
    expect(r.log.count('replies')).toBeGreaterThan(0);
    expect(folds).toBeGreaterThan(2);
    expect(res.compared).toBeGreaterThan(1000);
  }, 240_000);

  /**
   * Found by this test (issue 18): a prospect's reply, bounce or unsubscribe that reaches an
   * enrollment after it was moved to another sequence (by a rep, a branch arm, a reply rule) is
   * applied to the enrollment it moved to (EnrollmentService follows moved_to), and the breakdown
   * credited it to the new sequence and the new enrollment's last email (often none), where the
   * world says the prospect answered the old sequence's email. The credit now starts from the
   * enrollment the signal was addressed to (its journal entry's `addressedTo`) and follows moved_to
   * back (ops/figure-facts.ts `creditedEnrollment`, `emailCredit`).
   */
  it('a reply to a moved enrollment is credited to the email the old enrollment sent (seed 18001, 1 November 2026)', async () => {
    const { res } = await compare({ seed: 18_001, start: Date.UTC(2026, 9, 23, 20), days: 10 });
    expect(res.mismatches).toEqual([]);
  }, 240_000);

  /**
   * Found by the bench (`--seeds=100 --from=1`, 91 of 100 before): seed 21, a rep's unsubscribe on
   * an old enrollment (moved, nothing sent) was passed to its successor and credited to the
   * successor's email and sequence, not the old sequence the rep acted in (and the prospect's
   * replies to the old thread after the successor sent went to the newer email the same way: the
   * hand-built case in ops/figure-facts.test.ts); seed 79, a send of an enrollment a reply rule
   * made fell in the world's row with no sequence, because the world never learnt that enrollment
   * (the oracle's fault: the world now learns every move's enrollment, sim/simulation.ts
   * `learnMoves`). The bench's starts: three days before a change of the clocks.
   */
  it.each([
    { seed: 21, start: Date.UTC(2026, 9, 1, 11, 39), days: 10, about: 'a signal to a moved enrollment stays with the sequence it was addressed to' },
    { seed: 79, start: Date.UTC(2026, 2, 26, 10, 41), days: 10, about: "a reply rule's nurture enrollment has its sequence in the world" },
  ])('$about (bench seed $seed)', async (run) => {
    const { res } = await compare(run);
    expect(res.mismatches).toEqual([]);
  }, 240_000);
});

/**
 * Analytics against simulated worlds, at length (issue 18): the test (src/sim/analytics-accuracy.test.ts)
 * runs three seeds; this runs N, each starting a few days before one of the year's changes of the
 * clocks (America's and Europe's, spring and fall, Lord Howe's), ten simulated days, the rollup
 * folded at random moments, every figure of the headline, the days, the CSV and the five
 * breakdowns compared in five zones with the world's own log (test/analytics-accuracy.ts).
 *
 *   npm run bench -- analytics-accuracy [--seeds=50] [--from=1] [--backend=pglite|postgres]
 *
 * Prints each seed that disagrees, with its first disagreements.
 */
import { apiHarness } from '../test/api.ts';
import { accuracyRun, readingClock } from '../test/analytics-accuracy.ts';
import { flag } from './support/backends.ts';

const DAY = 86_400_000;
/** Three days before each change: America 8 March, Europe 29 March, Lord Howe 5 April and 4 October, Europe 25 October, America 1 November (2026). */
const CHANGES = [Date.UTC(2026, 2, 8), Date.UTC(2026, 2, 29), Date.UTC(2026, 3, 5), Date.UTC(2026, 9, 4), Date.UTC(2026, 9, 25), Date.UTC(2026, 10, 1)];

export default async function (args: string[]): Promise<Record<string, unknown>> {
  const seeds = Number(flag(args, 'seeds', '50'));
  const from = Number(flag(args, 'from', '1'));
  const backend = flag(args, 'backend', 'pglite') as 'pglite' | 'postgres';
  const clock = readingClock();
  // One sign-in per seed (each world is a new workspace): more than the per-address limit of the sign-in route allows in 15 minutes.
  const h = await apiHarness(backend, { loginLimit: { perEmail: 10, perIp: 1_000_000, windowMs: 15 * 60_000 } }, { clock, sender: false });
  const t0 = performance.now();
  const failed: Array<{ seed: number; start: string; mismatches: number; first: string[] }> = [];
  let compared = 0;
  let sends = 0;
  let replies = 0;
  let folds = 0;
  // What the stated rules cost: sends counted when recorded, on another UTC day than the prospect got them; the longest such wait; pending copies counted as sends.
  let otherDay = 0;
  let lagMaxMs = 0;
  let copiesOnly = 0;
  try {
    for (let seed = from; seed < from + seeds; seed++) {
      // A moment of the day that moves with the seed, 3 days before the change.
      const start = CHANGES[seed % CHANGES.length]! - 3 * DAY + ((seed * 7919) % 1440) * 60_000;
      const x = await accuracyRun(h, clock, { seed, start, days: 10 });
      compared += x.res.compared;
      sends += x.r.log.count('sends');
      replies += x.r.log.count('replies');
      folds += x.folds;
      for (const f of x.r.log.facts) {
        if (f.series !== 'sends') continue;
        if (f.how === 'copy only') copiesOnly++;
        else {
          lagMaxMs = Math.max(lagMaxMs, f.readAt - f.at);
          if (new Date(f.readAt).toISOString().slice(0, 10) !== new Date(f.at).toISOString().slice(0, 10)) otherDay++;
        }
      }
      if (x.res.mismatches.length) {
        failed.push({ seed, start: new Date(start).toISOString(), mismatches: x.res.mismatches.length, first: x.res.mismatches.slice(0, 3) });
        console.log(`seed ${seed} (${new Date(start).toISOString()}): ${x.res.mismatches.length} disagreements, first: ${x.res.mismatches[0]}`);
      }
    }
  } finally {
    await h.close();
  }
  const result = { backend, seeds, from, agreed: seeds - failed.length, failed, figuresCompared: compared, sends, replies, folds, copiesOnly, sendsRecordedOnAnotherUtcDay: otherDay, recordLagMaxMs: lagMaxMs, seconds: Math.round((performance.now() - t0) / 100) / 10 };
  console.log(`${result.agreed} of ${seeds} seeds agree to the unit; ${compared} figures compared, ${sends} sends (${copiesOnly} pending copies that never left; ${otherDay} recorded on another UTC day than delivered, the longest after ${Math.round(lagMaxMs / 60_000)} min), ${replies} replies, ${folds} folds, ${result.seconds} s`);
  return result;
}

import type { ApiHarness } from './api.ts';
import { login, seedMember } from './api.ts';
import { seededRandom } from '../src/common/random.ts';
import { compactFigures, foldFigures } from '../src/ops/figure-rollup.ts';
import { compareWithWorld, type AccuracyResult } from '../src/sim/analytics-accuracy.ts';
import { systemClock, type Clock } from '../src/common/clock.ts';
import { runSeed, type SimResult } from '../src/sim/simulation.ts';

/** The zones every accuracy run reads its figures in: whole hours, half hours, Lord Howe's half-hour daylight saving. */
export const ACCURACY_ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe'] as const;

const HOUR = 3_600_000;

/** The reading server's clock: now is the instant last set (a world of any date, in any order); timers run in real time. */
export interface ReadingClock extends Clock {
  set(at: number): void;
}

export function readingClock(): ReadingClock {
  let at = 0;
  return { now: () => at, set: (t) => void (at = t), setTimer: (ms, fn) => systemClock.setTimer(ms, fn), sleep: (ms) => systemClock.sleep(ms) };
}

/**
 * One simulated world on the harness's store, its analytics' rollup folded (and compacted) at random moments
 * (after about 3% of the steps, and before 30% of the reads), then read as a member through the
 * API and compared figure by figure with its log (src/sim/analytics-accuracy.ts). `clock` is the
 * harness server's: set to an hour after the run, so the window ends with its last day. Six days:
 * the window and the period before it hold a run of up to ten days between them.
 */
export async function accuracyRun(h: ApiHarness, clock: ReadingClock, run: { seed: number; start: number; days: number }): Promise<{ r: SimResult; res: AccuracyResult; folds: number }> {
  const random = seededRandom(`accuracy-${run.seed}-${run.start}`);
  let folds = 0;
  const fold = async () => {
    folds++;
    await foldFigures(h.store);
    // Half the folds are followed by a compaction (the API's, every tenth).
    if (random.next() < 0.5) await compactFigures(h.store);
  };
  const r = await runSeed({ seed: run.seed, start: run.start, days: run.days, store: h.store, between: async () => (random.next() < 0.03 ? fold() : undefined) });
  clock.set(r.endMs + HOUR);
  const ws = (await h.store.db.selectFrom('workspace').select('id').where('name', '=', 'Sim').executeTakeFirstOrThrow()).id;
  const email = `analyst-${run.seed}-${run.start}@accuracy.test`;
  const member = await seedMember(h.store, ws, email, 'member');
  const b = await login(h.app, email, member.password);
  const get = async (url: string) => {
    if (random.next() < 0.3) await fold();
    return b.call('GET', url);
  };
  const res = await compareWithWorld(get, r.log, { base: `/api/workspaces/${ws}`, asOf: clock.now(), days: 6, zones: ACCURACY_ZONES });
  return { r, res, folds };
}

import { describe, expect, it } from 'vitest';
import { afterCrash, freshHistory, type RestartHistory, type RestartPolicy } from './restart-policy.ts';
import { SimClock } from '../sim/sim-clock.ts';

const policy: RestartPolicy = { baseMs: 1_000, capMs: 8_000, stableMs: 60_000, maxFastCrashes: 6 };

/** A child that lives `upMs` each time, crash after crash, on a simulated clock: the delays the supervisor waits, until it gives up. */
function crashLoop(upMs: number[]): Array<number | string> {
  const clock = new SimClock(Date.UTC(2026, 11, 2, 9));
  let h: RestartHistory = freshHistory;
  const out: Array<number | string> = [];
  for (const up of upMs) {
    const started = clock.now();
    clock.advance(up);
    const d = afterCrash(h, started, clock.now(), policy);
    h = d.history;
    if (d.kind === 'give-up') {
      out.push('give-up');
      break;
    }
    out.push(d.delayMs);
    clock.advance(d.delayMs);
  }
  return out;
}

describe('restart policy', () => {
  it('doubles the delay after each fast crash, up to the cap, and gives up at the sixth in a row', () => {
    expect(crashLoop([100, 100, 100, 100, 100, 100, 100])).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 'give-up']);
  });

  it('a child that stayed up past stableMs starts the back-off over', () => {
    expect(crashLoop([100, 100, 100, 60_000, 100, 100])).toEqual([1_000, 2_000, 4_000, 1_000, 2_000, 4_000]);
  });

  it('a crash every stable period is restarted forever, each after the first delay', () => {
    expect(crashLoop(Array.from({ length: 20 }, () => 61_000))).toEqual(Array.from({ length: 20 }, () => 1_000));
  });

  it('the give-up reason says how many crashes and within what time', () => {
    let h = freshHistory;
    for (let i = 0; i < 5; i++) h = afterCrash(h, 0, 10, policy).history;
    const d = afterCrash(h, 0, 10, policy);
    expect(d).toMatchObject({ kind: 'give-up', reason: 'it ended 6 times in a row, each within 60 s of its start' });
  });

  it('a clean exit (status 0 after a drain of that child alone) is restarted at the first delay and not counted', () => {
    let h = freshHistory;
    for (let i = 0; i < 3; i++) h = afterCrash(h, 0, 10, policy).history;
    for (let i = 0; i < 10; i++) {
      const d = afterCrash(h, 0, 10, policy, true);
      expect(d).toEqual({ kind: 'restart', delayMs: 1_000, history: { fastCrashes: 3 } });
      h = d.history;
    }
    expect(afterCrash(h, 0, 10, policy)).toMatchObject({ kind: 'restart', delayMs: 8_000 });
  });

  it('a clock that went backwards counts as a fast crash, not a negative uptime', () => {
    expect(afterCrash(freshHistory, 5_000, 1_000, policy)).toMatchObject({ kind: 'restart', delayMs: 1_000 });
  });
});

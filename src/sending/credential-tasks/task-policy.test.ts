import { describe, expect, it } from 'vitest';
import { nextRevocation, waitVerdict, type WaitLimits } from './task-policy.ts';

const limits: WaitLimits = { claimWithinMs: 10_000, answerWithinMs: 60_000, backstopMs: 2_000 };
const T0 = Date.UTC(2026, 11, 3, 12, 0);

describe('credential task timing', () => {
  it('a revocation is retried 1 min, 2 min, 4 min … capped at 6 h, and given up after the tenth try', () => {
    const delays = Array.from({ length: 9 }, (_, i) => nextRevocation(i + 1));
    expect(delays.map((d) => ('retryInMs' in d ? d.retryInMs / 60_000 : null))).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256]);
    expect(nextRevocation(8, { baseMs: 60_000, capMs: 3_600_000, maxAttempts: 10 })).toEqual({ retryInMs: 3_600_000 });
    expect(nextRevocation(10)).toEqual({ giveUp: true });
    expect(nextRevocation(3, { baseMs: 50, capMs: 50, maxAttempts: 3 })).toEqual({ giveUp: true });
  });

  it('an asker answers once the task has ended, whatever the time', () => {
    for (const state of ['done', 'failed', 'cancelled'] as const) expect(waitVerdict(state, T0, T0 + 120_000, limits)).toEqual({ kind: 'answer' });
  });

  it('a task nobody claimed is withdrawn at the claim deadline; until then the wait ends at the next backstop read or the deadline', () => {
    expect(waitVerdict('queued', T0, T0, limits)).toEqual({ kind: 'wait', ms: 2_000 });
    expect(waitVerdict('queued', T0, T0 + 9_500, limits)).toEqual({ kind: 'wait', ms: 500 });
    expect(waitVerdict('queued', T0, T0 + 10_000, limits)).toEqual({ kind: 'withdraw' });
  });

  it('a task a sender took is waited for until the answer deadline, never withdrawn', () => {
    expect(waitVerdict('running', T0, T0 + 30_000, limits)).toEqual({ kind: 'wait', ms: 2_000 });
    expect(waitVerdict('running', T0, T0 + 59_000, limits)).toEqual({ kind: 'wait', ms: 1_000 });
    expect(waitVerdict('running', T0, T0 + 60_000, limits)).toEqual({ kind: 'timed_out' });
  });
});

import { describe, expect, it } from 'vitest';
import { defaultLastLookPolicy, judgeLook } from './mailbox-last-look.ts';

const p = defaultLastLookPolicy;
const T = Date.UTC(2026, 11, 1, 9);

describe('judgeLook: the mailbox last look decides send or defer', () => {
  it('nothing unread: send', () => {
    expect(judgeLook({ kind: 'clear' }, { unread: 0, failed: 0 }, T, p)).toMatchObject({ kind: 'send' });
  });

  it('unread mail from the lead holds the step for as long as it is unread: 2 s, 4 s, 8 s … up to 5 min, never sent on a guess', () => {
    const waits = Array.from({ length: 12 }, (_, n) => judgeLook({ kind: 'unread', count: 1 }, { unread: n, failed: 0 }, T, p)).map((v) => (v.kind === 'defer' ? (v.retryAt - T) / 1000 : v.kind));
    expect(waits).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300, 300]);
    expect(judgeLook({ kind: 'unread', count: 1 }, { unread: 10_000, failed: 0 }, T, p)).toMatchObject({ kind: 'defer', retryAt: T + 300_000, reason: expect.stringContaining('the sync role may be behind or stopped') });
  });

  it('a failed look defers briefly (fail safe), bounded by maxFailedLooks, and its count is its own', () => {
    expect(judgeLook({ kind: 'failed', reason: 'ECONNREFUSED' }, { unread: 5, failed: 0 }, T, p)).toEqual({ kind: 'defer', retryAt: T + p.failedLookDeferMs, reason: expect.stringContaining('ECONNREFUSED') });
    expect(judgeLook({ kind: 'failed', reason: 'ECONNREFUSED' }, { unread: 0, failed: p.maxFailedLooks }, T, p)).toMatchObject({ kind: 'send' });
  });
});

import { describe, expect, it } from 'vitest';
import { defaultLastLookPolicy, judgeLook } from './mailbox-last-look.ts';

const p = defaultLastLookPolicy;
const T = Date.UTC(2026, 11, 1, 9);

describe('judgeLook: the mailbox last look decides send or defer', () => {
  it('nothing unread: send', () => {
    expect(judgeLook({ kind: 'clear' }, { unread: 0, failed: 0 }, T, p)).toMatchObject({ kind: 'send' });
  });

  it('unread mail from the lead defers by deferMs, up to maxDeferrals, then the step goes (a hit the sync never reads cannot hold it forever)', () => {
    for (let n = 0; n < p.maxDeferrals; n++) expect(judgeLook({ kind: 'unread', count: 1 }, { unread: n, failed: 0 }, T, p)).toEqual({ kind: 'defer', retryAt: T + p.deferMs, reason: expect.stringContaining('not yet read') });
    expect(judgeLook({ kind: 'unread', count: 1 }, { unread: p.maxDeferrals, failed: 0 }, T, p)).toMatchObject({ kind: 'send', note: expect.stringContaining('after 5 deferrals') });
  });

  it('a failed look defers briefly (fail safe), bounded by maxFailedLooks, and its count is its own', () => {
    expect(judgeLook({ kind: 'failed', reason: 'ECONNREFUSED' }, { unread: p.maxDeferrals, failed: 0 }, T, p)).toEqual({ kind: 'defer', retryAt: T + p.failedLookDeferMs, reason: expect.stringContaining('ECONNREFUSED') });
    expect(judgeLook({ kind: 'failed', reason: 'ECONNREFUSED' }, { unread: 0, failed: p.maxFailedLooks }, T, p)).toMatchObject({ kind: 'send' });
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyProgress, endCauses, silentEnd, suggestOutcome, type CallTimes, type ProgressEvent } from './call-progress.ts';
import { callingHours } from './calling-hours.ts';

const T0 = Date.UTC(2026, 11, 3, 15, 0);
const fresh: CallTimes = { state: 'dialing', outcome: null, createdAt: T0, ringingAt: null, answeredAt: null, endedAt: null };

function run(events: ProgressEvent[]): CallTimes & { suggested?: string | null; durationMs?: number | null } {
  let c: CallTimes & { suggested?: string | null; durationMs?: number | null } = fresh;
  for (const ev of events) {
    const r = applyProgress(c, ev);
    if ('ignored' in r) continue;
    const ch = r.change;
    c = { ...c, state: ch.state, ringingAt: ch.ringingAt, answeredAt: ch.answeredAt, endedAt: ch.endedAt ?? c.endedAt, outcome: ch.outcome ?? c.outcome, suggested: ch.suggested, durationMs: ch.durationMs };
  }
  return c;
}

describe('call progress', () => {
  it('rings, answers and ends with a duration from the answer; a hang-up after an answer suggests connected', () => {
    const c = run([
      { event: 'ringing', at: T0 + 1500 },
      { event: 'answered', at: T0 + 9000 },
      { event: 'alive', at: T0 + 20_000 },
      { event: 'ended', at: T0 + 69_000, cause: 'hangup' },
    ]);
    expect(c).toMatchObject({ state: 'ended', ringingAt: T0 + 1500, answeredAt: T0 + 9000, endedAt: T0 + 69_000, durationMs: 60_000, suggested: 'connected', outcome: null });
  });

  it('suggests what the end says before an answer, and drops a call lost for a fault of ours at once', () => {
    expect(run([{ event: 'ended', at: T0, cause: 'busy' }])).toMatchObject({ suggested: 'busy', outcome: null, durationMs: null });
    for (const cause of ['no_answer', 'rejected', 'unavailable', 'canceled', 'hangup'] as const) expect(suggestOutcome(false, cause)).toBe('no_answer');
    expect(run([{ event: 'answered', at: T0 }, { event: 'ended', at: T0 + 5000, cause: 'media_lost' }])).toMatchObject({ outcome: 'dropped', suggested: 'dropped', durationMs: 5000 });
    expect(run([{ event: 'ended', at: T0, cause: 'connection_lost' }])).toMatchObject({ outcome: 'dropped' });
  });

  it('ignores reports that would move a call backwards or past its end, with the reason', () => {
    const answered: CallTimes = { ...fresh, state: 'answered', answeredAt: T0 + 1000 };
    expect(applyProgress(answered, { event: 'ringing', at: T0 + 2000 })).toEqual({ ignored: 'already answered' });
    expect(applyProgress({ ...answered, state: 'ended', endedAt: T0 + 3000 }, { event: 'alive', at: T0 + 4000 })).toEqual({ ignored: 'the call has ended' });
  });

  it('never puts a step before the call began or before the step before it (clients retry, clocks differ)', () => {
    const ev = fc.oneof(
      fc.record({ event: fc.constantFrom('ringing' as const, 'answered' as const, 'alive' as const), at: fc.integer({ min: T0 - 60_000, max: T0 + 3_600_000 }) }),
      fc.record({ event: fc.constant('ended' as const), at: fc.integer({ min: T0 - 60_000, max: T0 + 3_600_000 }), cause: fc.constantFrom(...endCauses) }),
    );
    fc.assert(
      fc.property(fc.array(ev, { maxLength: 12 }), (events) => {
        const c = run(events);
        const times = [c.createdAt, c.ringingAt, c.answeredAt, c.endedAt].filter((t): t is number => t !== null);
        if (c.ringingAt !== null && c.answeredAt !== null) expect(c.answeredAt).toBeGreaterThanOrEqual(c.ringingAt);
        for (const t of times) expect(t).toBeGreaterThanOrEqual(T0);
        if (c.endedAt !== null) expect(c.endedAt).toBe(Math.max(...times));
        if (c.state === 'ended') expect(c.durationMs == null || c.durationMs >= 0).toBe(true);
        // An abnormal end is never left without an outcome.
        if (c.state === 'ended' && c.suggested === 'dropped') expect(c.outcome).toBe('dropped');
      }),
    );
  });

  it('a silent call ends at the last word heard, as lost', () => {
    const ch = silentEnd({ ...fresh, state: 'answered', answeredAt: T0 + 1000 }, T0 + 41_000);
    expect(ch).toMatchObject({ state: 'ended', endedAt: T0 + 41_000, durationMs: 40_000, outcome: 'dropped', endCause: 'connection_lost' });
  });
});

describe('calling hours', () => {
  it("allows 08:00 to 21:00 in the lead's zone, says the lead's time, and reads an unknown zone as UTC", () => {
    // 15:00 UTC: 10:00 in New York, 07:00 in Los Angeles, 00:00 in Tokyo.
    expect(callingHours(T0, 'America/New_York')).toEqual({ ok: true, local: '10:00 in America/New_York' });
    expect(callingHours(T0, 'America/Los_Angeles')).toEqual({ ok: false, local: '07:00 in America/Los_Angeles' });
    expect(callingHours(T0, 'Asia/Tokyo')).toEqual({ ok: false, local: '00:00 in Asia/Tokyo' });
    expect(callingHours(T0 + 10 * 3_600_000 + 59 * 60_000, 'America/New_York').ok).toBe(true); // 20:59
    expect(callingHours(T0 + 11 * 3_600_000, 'America/New_York').ok).toBe(false); // 21:00
    expect(callingHours(T0, 'Not/AZone')).toEqual({ ok: true, local: '15:00 in UTC' });
  });
});

import { describe, expect, it } from 'vitest';
import { SimClock } from '../../../sim/sim-clock.ts';
import { decideRecheck, RECHECK_EVERY_MS, REVOKE_AFTER_FAILURES, type ProofStreak, type RecheckFinding, type RecheckVerdict } from './proof-recheck.ts';

/**
 * The daily re-check's decision (proof-recheck.ts) on a simulated clock: a record removed is
 * counted day after day and the proof goes after four answers spanning three days; a failed
 * lookup counts as nothing; one check that finds the record ends the streak.
 */
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 5, 1, 3, 0);

/** Checks made at the given offsets from T0 with the given findings: each verdict, the streak carried from one to the next. */
function run(steps: Array<[offsetMs: number, finding: RecheckFinding]>): RecheckVerdict[] {
  const clock = new SimClock(T0);
  let streak: ProofStreak = { failures: 0, failingSince: null };
  const out: RecheckVerdict[] = [];
  for (const [at, finding] of steps) {
    clock.advanceTo(T0 + at);
    const v = decideRecheck(streak, finding, clock.now());
    out.push(v);
    if (v.action === 'revoke') break;
    streak = v.streak;
  }
  return out;
}
const day = (n: number, hours = 0) => n * RECHECK_EVERY_MS + hours * HOUR;

describe('decideRecheck: when a verified SSO domain loses its proof', () => {
  it('keeps a domain whose record is found, and ends any streak', () => {
    expect(decideRecheck({ failures: 2, failingSince: T0 }, 'found', T0 + day(2))).toEqual({ action: 'kept', streak: { failures: 0, failingSince: null } });
  });

  it('revokes a removed record on the fourth daily check, three days after the first failure', () => {
    const v = run([
      [day(0), 'missing'],
      [day(1), 'missing'],
      [day(2), 'wrong_token'],
      [day(3), 'missing'],
    ]);
    expect(v.map((x) => x.action)).toEqual(['strike', 'strike', 'strike', 'revoke']);
    expect(v[0]).toEqual({ action: 'strike', streak: { failures: 1, failingSince: T0 }, revokeFrom: T0 + day(3) });
    expect(v[3]).toEqual({ action: 'revoke', streak: { failures: REVOKE_AFTER_FAILURES, failingSince: T0 } });
  });

  it('needs the time as well as the count: four failures within a day are not enough', () => {
    const v = run([
      [0, 'missing'],
      [HOUR, 'missing'],
      [2 * HOUR, 'missing'],
      [3 * HOUR, 'missing'],
      [day(2), 'missing'],
      [day(3), 'missing'],
    ]);
    expect(v.map((x) => x.action)).toEqual(['strike', 'strike', 'strike', 'strike', 'strike', 'revoke']);
    expect(v.at(-1)!.streak.failures).toBe(6);
  });

  it('needs the count as well as the time: two failures three days apart are not enough', () => {
    expect(run([[0, 'missing'], [day(3), 'missing']]).map((x) => x.action)).toEqual(['strike', 'strike']);
  });

  it('a failed lookup (no answer) is no evidence: it neither counts nor ends the streak', () => {
    const v = run([
      [day(0), 'missing'],
      [day(1), 'lookup_failed'],
      [day(1, 1), 'lookup_failed'],
      [day(1, 2), 'missing'],
      [day(2), 'lookup_failed'],
      [day(3), 'missing'],
      [day(4), 'missing'],
    ]);
    expect(v.map((x) => x.action)).toEqual(['strike', 'inconclusive', 'inconclusive', 'strike', 'inconclusive', 'strike', 'revoke']);
    expect(v[1]).toEqual({ action: 'inconclusive', streak: { failures: 1, failingSince: T0 } });
    // A DNS server that never answers never takes a proof away.
    expect(run(Array.from({ length: 10 }, (_, i) => [day(i), 'lookup_failed'] as [number, RecheckFinding])).every((x) => x.action === 'inconclusive')).toBe(true);
  });

  it('a record back before the end starts the count again', () => {
    const v = run([
      [day(0), 'missing'],
      [day(1), 'missing'],
      [day(2), 'missing'],
      [day(3), 'found'],
      [day(4), 'missing'],
      [day(5), 'missing'],
      [day(6), 'missing'],
      [day(7), 'missing'],
    ]);
    expect(v.map((x) => x.action)).toEqual(['strike', 'strike', 'strike', 'kept', 'strike', 'strike', 'strike', 'revoke']);
    expect(v.at(-1)!.streak).toEqual({ failures: 4, failingSince: T0 + day(4) });
  });
});

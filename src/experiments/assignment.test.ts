import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { armFor, assignArm, type Arm } from './assignment.ts';

const uuid = fc.uuid();
const arms = fc.uniqueArray(fc.record({ id: fc.uuid(), weight: fc.integer({ min: 0, max: 20 }) }), { minLength: 1, maxLength: 5, selector: (a) => a.id });

describe('experiment assignment', () => {
  it('gives the same arm for the same experiment, enrollment and arms, whatever their order', () => {
    fc.assert(
      fc.property(uuid, uuid, arms, (exp, e, as) => {
        const a = assignArm(exp, e, as);
        expect(assignArm(exp, e, as)).toBe(a);
        expect(assignArm(exp, e, [...as].reverse())).toBe(a);
        if (as.every((x) => x.weight === 0)) expect(a).toBeNull();
        else expect(as.find((x) => x.id === a)!.weight).toBeGreaterThan(0);
      }),
    );
  });

  it('adding an arm moves enrollments only onto the new arm', () => {
    fc.assert(
      fc.property(uuid, fc.array(uuid, { minLength: 1, maxLength: 50 }), arms, fc.record({ id: fc.uuid(), weight: fc.integer({ min: 1, max: 20 }) }), (exp, es, as, added) => {
        fc.pre(!as.some((a) => a.id === added.id));
        for (const e of es) {
          const before = assignArm(exp, e, as);
          const after = assignArm(exp, e, [...as, added]);
          if (after !== before) expect(after).toBe(added.id);
        }
      }),
    );
  });

  it('respects the weights over many enrollments', () => {
    const as: Arm[] = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 2 },
      { id: 'c', weight: 5 },
    ];
    const n = 40_000;
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      // Enrollment ids that share a long prefix, as UUIDv7s minted in one batch do.
      const arm = assignArm('exp-1', `0190a1b2-c3d4-7e5f-8a9b-${i.toString(16).padStart(12, '0')}`, as)!;
      counts.set(arm, (counts.get(arm) ?? 0) + 1);
    }
    for (const a of as) {
      const expected = (n * a.weight) / 8;
      // Five standard deviations of the binomial: a failure here is a skewed hash, not bad luck.
      const sd = Math.sqrt(n * (a.weight / 8) * (1 - a.weight / 8));
      expect(Math.abs(counts.get(a.id)! - expected)).toBeLessThan(5 * sd);
    }
  });

  it('assigns independently across experiments', () => {
    const as: Arm[] = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 1 },
    ];
    let same = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) if (assignArm('step-1', `e${i}`, as) === assignArm('step-2', `e${i}`, as)) same++;
    // Independent fair coins agree half the time.
    expect(Math.abs(same / n - 0.5)).toBeLessThan(5 * Math.sqrt(0.25 / n));
  });

  it('a declared winner takes every enrollment from its instant on, and no one enrolled before', () => {
    const as: Arm[] = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 1 },
    ];
    const winner = { armId: 'b', since: 1_000 };
    for (let i = 0; i < 200; i++) {
      expect(armFor('x', { id: `e${i}`, enrolledAt: 1_000 + i }, as, winner)).toBe('b');
      expect(armFor('x', { id: `e${i}`, enrolledAt: 999 }, as, winner)).toBe(assignArm('x', `e${i}`, as));
    }
    // A winner that is no longer a live arm is ignored.
    expect(armFor('x', { id: 'e1', enrolledAt: 5_000 }, [as[0]!], winner)).toBe('a');
  });
});

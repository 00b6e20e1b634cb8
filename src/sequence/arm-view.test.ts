/**
 * Sequence experiments in the engine (arm-view.ts): the arm is fixed once and survives retries,
 * restarts (a fresh process reading the stored enrollment) and edits; timing arms are applied by
 * the engine's own due-time logic, so every send stays inside the arm's hours and the window.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { enrollmentFixture } from '../../test/sequence/enrollment-fixture.ts';
import { isAllowed, type SendWindow } from '../calendar/index.ts';
import { toWall } from '../calendar/zone.ts';
import { pickVariant } from './effects.ts';
import { defaultStopRules, NO_ARM, type Enrollment, type SequenceDef, type SequenceExperiment, type StepDef } from './model.ts';
import { calendarFor } from './plan.ts';
import { transition } from './transition.ts';
import { armedView, joinExperiments } from './arm-view.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0); // Monday
const DAY = 86_400_000;
const id = (n: number) => `00000000-0000-7000-8000-0000000000${10 + n}`;
const WINDOW: SendWindow = { kind: 'hours', days: [1, 2, 3, 4, 5], start: '08:00', end: '18:00' };

function stepOf(n: number, kind: StepDef['kind'], extra: Partial<StepDef> = {}): StepDef {
  return { id: id(n), key: `s${n}`, position: n * 10, kind, delay: { amount: 1, unit: 'business_days' }, archived: false, ...extra };
}

const variants = [
  { id: 'aaaaaaaa-0000-7000-8000-000000000001', weight: 1 },
  { id: 'bbbbbbbb-0000-7000-8000-000000000002', weight: 1 },
];

/** The hour on the prospect's clock (the wall time is an epoch-like count of local milliseconds). */
function localHour(ms: number, zone: string): number {
  return new Date(toWall(zone, ms)).getUTCHours();
}

function localMinute(ms: number, zone: string): number {
  const d = new Date(toWall(zone, ms));
  return d.getUTCHours() * 60 + d.getUTCMinutes();
}

function minuteOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
}

function hoursOn(start: string, end: string): SendWindow {
  return { kind: 'hours', days: [1, 2, 3, 4, 5], start, end };
}

/** Arm `early`: 2 business days, 08-10, variant a on s0 and s2; arm `late`: 4 business days, 14-16, variant b; arm `call-first`: call before the email. */
const experiment: SequenceExperiment = {
  key: 'timing',
  arms: [
    { key: 'early', weight: 1, steps: { [id(0)]: { variantId: variants[0]!.id }, [id(2)]: { variantId: variants[0]!.id, delay: { amount: 2, unit: 'business_days' }, window: hoursOn('08:00', '10:00') } } },
    { key: 'late', weight: 1, steps: { [id(0)]: { variantId: variants[1]!.id }, [id(2)]: { variantId: variants[1]!.id, delay: { amount: 4, unit: 'business_days' }, window: hoursOn('14:00', '16:00') } } },
  ],
};
const orderExperiment: SequenceExperiment = {
  key: 'order',
  arms: [
    { key: 'email-first', weight: 1, steps: {} },
    { key: 'call-first', weight: 1, steps: {}, order: [id(2), id(1)] },
  ],
};

function seqWith(exps: SequenceExperiment[], window: SendWindow = WINDOW): SequenceDef {
  return {
    id: 'seq',
    workspaceId: 'ws',
    window,
    skipHolidays: false,
    jitterMinutes: 30,
    stopRules: defaultStopRules,
    steps: [stepOf(0, 'email', { variants, delay: { amount: 0, unit: 'minutes' } }), stepOf(1, 'call', { waitForTask: true }), stepOf(2, 'email', { variants })],
    experiments: exps,
  };
}

function enrollmentN(i: number, zone = 'America/New_York'): Enrollment {
  return enrollmentFixture(T0, { id: `0190aaaa-0000-7000-8000-${String(i).padStart(12, '0')}`, zone });
}

/** Runs one enrollment through its steps: each timer fires when due, each send and task completes at once. Returns the sends and tasks in order. */
function run(e0: Enrollment, seq: SequenceDef, edit?: (s: SequenceDef) => SequenceDef) {
  let e = transition(e0, { type: 'enrolled' }, e0.enrolledAt, seq).next;
  const done: Array<{ stepId: string; at: number; kind: 'send' | 'task'; variant: string | null }> = [];
  let current = seq;
  for (let guard = 0; guard < 20 && e.state === 'active'; guard++) {
    if (edit && guard === 1) {
      current = edit(current);
      e = transition(e, { type: 'sequence_edited' }, e.dueAt ?? e.enrolledAt, current).next;
    }
    const at = e.dueAt!;
    const r = transition(e, { type: 'step_due' }, at, current);
    // A retry of the same due timer is ignored: nothing doubles, nothing moves.
    expect(transition(r.next, { type: 'step_due' }, at, current).effects).toEqual([]);
    e = r.next;
    const fx = r.effects.find((f) => f.type === 'create_send_request' || f.type === 'create_task');
    if (!fx || (fx.type !== 'create_send_request' && fx.type !== 'create_task')) continue;
    if (fx.type === 'create_send_request') {
      done.push({ stepId: fx.stepId, at, kind: 'send', variant: pickVariant(current, e, fx.stepId) });
      e = transition(e, { type: 'step_sent', stepId: fx.stepId, at }, at, current).next;
    } else {
      done.push({ stepId: fx.stepId, at, kind: 'task', variant: null });
      e = transition(e, { type: 'task_completed', stepId: fx.stepId }, at, current).next;
    }
  }
  return { e, done };
}

describe('sequence experiments in the engine', () => {
  it('fixes the arm at enrollment, by the hash, and keeps it through retries, restarts and edits', () => {
    const seq = seqWith([experiment]);
    const counts: Record<string, number> = { early: 0, late: 0 };
    for (let i = 0; i < 400; i++) {
      const e = enrollmentN(i);
      const a = transition(e, { type: 'enrolled' }, T0, seq).next;
      // A retry (or another process) computes the same arm.
      expect(transition(e, { type: 'enrolled' }, T0, seq).next.experimentArms).toEqual(a.experimentArms);
      const arm = a.experimentArms!.timing!;
      counts[arm]!++;
      // An edit that reweights, adds an arm or reorders the arms moves no one: the stored arm is read.
      const edited = seqWith([{ ...experiment, arms: [{ key: 'new', weight: 50, steps: {} }, ...experiment.arms.map((x) => ({ ...x, weight: x.key === arm ? 0 : 9 }))] }]);
      const later = transition({ ...a, dueAt: T0 }, { type: 'sequence_edited' }, T0, edited).next;
      expect(later.experimentArms!.timing).toBe(arm);
      // A restart reads the stored record (enrollment-row.ts) and the view follows it.
      const restarted: Enrollment = JSON.parse(JSON.stringify(a));
      expect(armedView(seq, restarted).steps.find((s) => s.id === id(2))!.window).toEqual(arm === 'early' ? hoursOn('08:00', '10:00') : hoursOn('14:00', '16:00'));
    }
    // 1:1 weights, 400 enrollments: within 5 standard deviations (10) of 200.
    expect(Math.abs(counts.early! - 200)).toBeLessThan(50);
  });

  it('an enrollment made before the experiment existed stays out of it', () => {
    const plain = seqWith([]);
    const before = transition(enrollmentN(1), { type: 'enrolled' }, T0, plain).next;
    expect(before.experimentArms).toBeUndefined();
    const after = transition({ ...before }, { type: 'step_due' }, before.dueAt!, seqWith([experiment])).next;
    expect(after.experimentArms).toBeUndefined();
    expect(armedView(seqWith([experiment]), after)).toEqual(seqWith([experiment]));
  });

  it('no arm of positive weight: the enrollment is marked out of the experiment and runs the sequence as written', () => {
    const seq = seqWith([{ ...experiment, arms: experiment.arms.map((a) => ({ ...a, weight: 0 })) }]);
    const e = transition(enrollmentN(1), { type: 'enrolled' }, T0, seq).next;
    expect(e.experimentArms).toEqual({ timing: NO_ARM });
    expect(armedView(seq, e)).toBe(seq);
  });

  it('sends each arm its variants on every step it fixes, and its delay and hours on the timed step', () => {
    const seq = seqWith([experiment]);
    for (let i = 0; i < 60; i++) {
      const { e, done } = run(enrollmentN(i), seq);
      expect(e.state).toBe('finished');
      const arm = e.experimentArms!.timing!;
      const want = arm === 'early' ? variants[0]!.id : variants[1]!.id;
      const sends = done.filter((d) => d.kind === 'send');
      expect(sends.map((d) => d.variant)).toEqual([want, want]);
      const last = sends[1]!;
      const hour = localHour(last.at, 'America/New_York');
      if (arm === 'early') expect(hour >= 8 && hour < 10, `early arm sent at ${hour}h`).toBe(true);
      else expect(hour >= 14 && hour < 16, `late arm sent at ${hour}h`).toBe(true);
      // The arm's delay: at least 2 (early) or 4 (late) business days after the call.
      const call = done.find((d) => d.kind === 'task')!;
      expect(last.at - call.at).toBeGreaterThanOrEqual((arm === 'early' ? 2 : 4) * DAY - 2 * 3_600_000);
    }
  });

  it('an order arm runs the call before the email, keeping the places\' delays; the other arm the sequence\'s order', () => {
    const seq = seqWith([orderExperiment]);
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const { e, done } = run(enrollmentN(i), seq);
      const arm = e.experimentArms!.order!;
      seen.add(arm);
      expect(done.map((d) => d.stepId)).toEqual(arm === 'call-first' ? [id(0), id(2), id(1)] : [id(0), id(1), id(2)]);
      expect(new Set(done.map((d) => d.stepId)).size).toBe(3);
    }
    expect([...seen].sort()).toEqual(['call-first', 'email-first']);
  });

  it('an edit mid-way (weights changed, an arm added) keeps each enrollment on its arm until the end', () => {
    const seq = seqWith([experiment]);
    for (let i = 0; i < 40; i++) {
      const plain = run(enrollmentN(i), seq);
      const edited = run(enrollmentN(i), seq, (s) => ({ ...s, experiments: [{ ...experiment, arms: [...experiment.arms.map((a) => ({ ...a, weight: 7 })), { key: 'z', weight: 100, steps: {} }] }] }));
      expect(edited.e.experimentArms).toEqual(plain.e.experimentArms);
      expect(edited.done).toEqual(plain.done);
    }
  });
});

describe('timing arms keep every send inside the window (property)', () => {
  const zones = ['America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Sydney', 'Pacific/Auckland', 'America/Los_Angeles'];
  const hours = fc
    .tuple(fc.integer({ min: 8, max: 17 }), fc.integer({ min: 1, max: 4 }))
    .map(([h, len]) => hoursOn(`${String(h).padStart(2, '0')}:00`, `${String(Math.min(18, h + len)).padStart(2, '0')}:00`));
  const delay = fc.record({ amount: fc.integer({ min: 0, max: 6 }), unit: fc.constantFrom('minutes' as const, 'hours' as const, 'days' as const, 'business_days' as const) });
  const arm = (key: string) =>
    fc.record({
      key: fc.constant(key),
      weight: fc.integer({ min: 1, max: 5 }),
      steps: fc.record({ [id(0)]: fc.record({ window: hours }, { requiredKeys: [] }), [id(1)]: fc.record({ delay, window: hours }, { requiredKeys: [] }), [id(2)]: fc.record({ delay, window: hours }, { requiredKeys: [] }) }),
      order: fc.option(fc.constant([id(2), id(1)]), { nil: undefined }),
    });

  it('never a send or task outside the arm\'s hours or the sequence\'s window, whatever the zone, arm and edit', () => {
    fc.assert(
      fc.property(fc.tuple(arm('x'), arm('y')), fc.constantFrom(...zones), fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 7 * DAY }), (arms, zone, n, offset) => {
        const exp: SequenceExperiment = { key: 'p', arms: arms.map((a) => ({ ...a, ...(a.order ? { order: a.order } : { order: undefined }) })) as SequenceExperiment['arms'] };
        const seq = seqWith([exp]);
        const e0 = enrollmentFixture(T0 + offset, { id: `0190bbbb-0000-7000-8000-${String(n).padStart(12, '0')}`, zone });
        const { e, done } = run(e0, seq);
        expect(e.state).toBe('finished');
        const view = armedView(seq, e);
        for (const d of done) {
          const step = view.steps.find((s) => s.id === d.stepId)!;
          expect(isAllowed(d.at, calendarFor(seq, e)), `${new Date(d.at).toISOString()} outside the window in ${zone}`).toBe(true);
          // The arm's hours, read off the prospect's clock (not through the engine's own calendarFor).
          const w = step.window;
          if (w?.kind === 'hours') {
            const m = localMinute(d.at, zone);
            expect(m >= minuteOf(w.start) && m < minuteOf(w.end), `${new Date(d.at).toISOString()} outside the arm's hours ${w.start}-${w.end} in ${zone}`).toBe(true);
          }
          const h = localHour(d.at, zone);
          expect(h >= 8 && h < 18, `never at ${h}h`).toBe(true);
        }
        expect(new Set(done.map((d) => d.stepId)).size).toBe(done.length);
      }),
      { numRuns: 300 },
    );
  });

  it('joinExperiments is pure: the same enrollment and sequence give the same arms', () => {
    const seq = seqWith([experiment, orderExperiment]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), (n) => {
        const e = enrollmentN(n);
        expect(joinExperiments(e, seq).experimentArms).toEqual(joinExperiments(JSON.parse(JSON.stringify(e)), seq).experimentArms);
      }),
      { numRuns: 200 },
    );
  });
});

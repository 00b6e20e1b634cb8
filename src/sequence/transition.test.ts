/**
 * The pure transition function: every event in every state (unit), then properties over random
 * sequences, calendars, edits and event streams (fast-check), run against a small model of the
 * outbox and the task list that carries out the effects the way effects.ts and the sender do.
 */
import fc from 'fast-check';
import { enrollmentFixture } from '../../test/sequence/enrollment-fixture.ts';
import { describe, expect, it } from 'vitest';
import { placeSteps, POSITION_GAP } from './apply-definition.ts';
import { isAllowed, type Delay, type SendWindow, type Weekday } from '../calendar/index.ts';
import {
  defaultStopRules,
  isTerminal,
  terminalStates,
  retryableCallOutcomes,
  type CallRetry,
  type Effect,
  type EngineEvent,
  type EngineEventType,
  type Enrollment,
  type EnrollmentState,
  type SequenceDef,
  type StepDef,
  type StepKind,
  type TransitionResult,
} from './model.ts';
import { calendarFor, nextStep } from './plan.ts';
import { transition } from './transition.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0); // Monday 1 June 2026, 12:00 UTC
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

function step(i: number, kind: StepKind, delay: Delay = { amount: 1, unit: 'days' }, extra: Partial<StepDef> = {}): StepDef {
  return { id: `00000000-0000-7000-8000-0000000000${String(10 + i)}`, key: `s${i}`, position: i * POSITION_GAP, kind, delay, archived: false, ...extra };
}

function sequence(steps: StepDef[], extra: Partial<SequenceDef> = {}): SequenceDef {
  return { id: 'seq', workspaceId: 'ws', window: { kind: 'any' }, skipHolidays: false, jitterMinutes: 0, stopRules: defaultStopRules, steps, ...extra };
}

function enrollment(extra: Partial<Enrollment> = {}): Enrollment {
  return enrollmentFixture(T0, extra);
}

const seq3 = sequence([step(0, 'email', { amount: 0, unit: 'minutes' }), step(1, 'call'), step(2, 'email', { amount: 2, unit: 'days' })]);
const [s0, s1, s2] = seq3.steps as [StepDef, StepDef, StepDef];

/** One enrollment in each situation the engine distinguishes. */
const situations: Record<string, Enrollment> = {
  'active, waiting for its timer': enrollment({ waitingFor: 'timer', nextStepId: s1.id, lastStepId: s0.id, lastStepAt: T0, doneStepIds: [s0.id], dueAt: T0 + DAY }),
  'active, timer due': enrollment({ waitingFor: 'timer', nextStepId: s1.id, lastStepId: s0.id, lastStepAt: T0 - DAY, doneStepIds: [s0.id], dueAt: T0 }),
  'active, waiting for a send': enrollment({ waitingFor: 'send', nextStepId: s0.id }),
  'active, waiting for a task': enrollment({ waitingFor: 'task', nextStepId: s1.id, lastStepId: s0.id, lastStepAt: T0 - DAY, doneStepIds: [s0.id] }),
  'paused, with a resume time': enrollment({ state: 'paused', waitingFor: 'timer', nextStepId: s1.id, lastStepId: s0.id, lastStepAt: T0 - DAY, doneStepIds: [s0.id], dueAt: T0 + 3 * DAY, pausedDueAt: T0 + DAY }),
  'paused, for good': enrollment({ state: 'paused', waitingFor: 'timer', nextStepId: s1.id, lastStepId: s0.id, lastStepAt: T0 - DAY, doneStepIds: [s0.id], pausedDueAt: T0 + DAY }),
};
for (const st of terminalStates) situations[st] = enrollment({ state: st, stateReason: 'test', lastStepId: s0.id, lastStepAt: T0 - DAY, doneStepIds: [s0.id] });

const events: Record<EngineEventType, EngineEvent> = {
  enrolled: { type: 'enrolled' },
  step_due: { type: 'step_due' },
  step_sent: { type: 'step_sent', stepId: s2.id, at: T0 },
  send_failed: { type: 'send_failed', stepId: s0.id, permanent: true, reason: '550 rejected' },
  reply: { type: 'reply', messageId: '<r@x>' },
  bounce: { type: 'bounce', hard: true, reason: '5.1.1' },
  out_of_office: { type: 'out_of_office', returnAt: T0 + 5 * DAY },
  unsubscribe: { type: 'unsubscribe', source: 'link' },
  meeting_booked: { type: 'meeting_booked' },
  call_outcome: { type: 'call_outcome', stepId: s1.id, outcome: 'connected' },
  task_completed: { type: 'task_completed', stepId: s1.id, outcome: 'done' },
  pause: { type: 'pause', reason: 'rep' },
  resume: { type: 'resume' },
  stop: { type: 'stop', reason: 'rep' },
  move: { type: 'move', toSequenceId: 'seq-b', toSequenceName: 'Sequence B', toEnrollmentId: '00000000-0000-7000-8000-00000000e002' },
  sequence_edited: { type: 'sequence_edited' },
};

type Expect = `${'applied' | 'ignored'} ${EnrollmentState}`;

/** What each event does in each situation: the documented behaviour, one cell per pair. */
const table: Record<string, Record<EngineEventType, Expect>> = {
  'active, waiting for its timer': {
    enrolled: 'ignored active', step_due: 'ignored active', step_sent: 'applied active', send_failed: 'applied failed', reply: 'applied replied',
    bounce: 'applied bounced', out_of_office: 'applied paused', unsubscribe: 'applied unsubscribed', meeting_booked: 'applied finished',
    call_outcome: 'applied active', task_completed: 'applied active', pause: 'applied paused', resume: 'ignored active', stop: 'applied stopped', move: 'applied moved', sequence_edited: 'ignored active',
  },
  'active, timer due': {
    enrolled: 'ignored active', step_due: 'applied active', step_sent: 'applied active', send_failed: 'applied failed', reply: 'applied replied',
    bounce: 'applied bounced', out_of_office: 'applied paused', unsubscribe: 'applied unsubscribed', meeting_booked: 'applied finished',
    call_outcome: 'applied active', task_completed: 'applied active', pause: 'applied paused', resume: 'ignored active', stop: 'applied stopped', move: 'applied moved', sequence_edited: 'ignored active',
  },
  'active, waiting for a send': {
    enrolled: 'ignored active', step_due: 'ignored active', step_sent: 'applied active', send_failed: 'applied failed', reply: 'applied replied',
    bounce: 'applied bounced', out_of_office: 'applied paused', unsubscribe: 'applied unsubscribed', meeting_booked: 'applied finished',
    call_outcome: 'applied active', task_completed: 'applied active', pause: 'applied paused', resume: 'ignored active', stop: 'applied stopped', move: 'applied moved', sequence_edited: 'ignored active',
  },
  'active, waiting for a task': {
    enrolled: 'ignored active', step_due: 'ignored active', step_sent: 'applied active', send_failed: 'applied failed', reply: 'applied replied',
    bounce: 'applied bounced', out_of_office: 'applied paused', unsubscribe: 'applied unsubscribed', meeting_booked: 'applied finished',
    call_outcome: 'applied active', task_completed: 'applied active', pause: 'applied paused', resume: 'ignored active', stop: 'applied stopped', move: 'applied moved', sequence_edited: 'ignored active',
  },
  'paused, with a resume time': {
    enrolled: 'ignored paused', step_due: 'ignored paused', step_sent: 'applied paused', send_failed: 'applied failed', reply: 'applied replied',
    bounce: 'applied bounced', out_of_office: 'applied paused', unsubscribe: 'applied unsubscribed', meeting_booked: 'applied finished',
    call_outcome: 'applied paused', task_completed: 'applied paused', pause: 'ignored paused', resume: 'applied active', stop: 'applied stopped', move: 'applied moved', sequence_edited: 'ignored paused',
  },
  'paused, for good': {
    enrolled: 'ignored paused', step_due: 'ignored paused', step_sent: 'applied paused', send_failed: 'applied failed', reply: 'applied replied',
    bounce: 'applied bounced', out_of_office: 'applied paused', unsubscribe: 'applied unsubscribed', meeting_booked: 'applied finished',
    call_outcome: 'applied paused', task_completed: 'applied paused', pause: 'ignored paused', resume: 'applied active', stop: 'applied stopped', move: 'applied moved', sequence_edited: 'ignored paused',
  },
};
// Final states absorb everything, except: a sent step is still recorded (a send that raced the stop),
// an unsubscribe still suppresses the address, and after 'finished' a reply, a bounce or an
// unsubscribe still counts (the prospect answered the sequence; the last email bounced), and a stop
// cancels the open tasks a call that did not hold the sequence left behind, or, after 'replied',
// the owner's notice of the reply (a reply rule).
for (const st of terminalStates) {
  const row = {} as Record<EngineEventType, Expect>;
  for (const ev of Object.keys(events) as EngineEventType[]) row[ev] = `ignored ${st}`;
  row.step_sent = `applied ${st}`;
  row.unsubscribe = st === 'finished' ? 'applied unsubscribed' : `applied ${st}`;
  if (st === 'finished') {
    row.reply = 'applied replied';
    row.bounce = 'applied bounced';
    row.stop = 'applied finished';
  }
  if (st === 'replied') row.stop = 'applied replied';
  table[st] = row;
}

describe('transition: every event in every state', () => {
  const cells = Object.entries(table).flatMap(([situation, row]) => (Object.keys(row) as EngineEventType[]).map((ev) => [situation, ev, row[ev]] as const));
  it.each(cells)('%s + %s -> %s', (situation, ev, expected) => {
    const r = transition(situations[situation]!, events[ev], T0, seq3);
    expect(`${r.outcome} ${r.next.state}`).toBe(expected);
    if (r.outcome === 'ignored') {
      expect(r.next).toBe(situations[situation]);
      expect(r.effects).toEqual([]);
      expect(r.note).toBeTruthy();
    }
  });

  it('terminal states create no send request, task or timer, whatever the event', () => {
    for (const st of terminalStates) {
      for (const ev of Object.values(events)) {
        const r = transition(situations[st]!, ev, T0, seq3);
        expect(r.effects.filter((f) => f.type === 'create_send_request' || f.type === 'create_task' || f.type === 'schedule_timer')).toEqual([]);
      }
    }
  });

  it('records a step sent after a stop, plans nothing, and suppresses on an unsubscribe after a stop', () => {
    const stopped = situations.replied!;
    const r = transition(stopped, { type: 'step_sent', stepId: s2.id, at: T0 }, T0, seq3);
    expect(r.next.doneStepIds).toEqual([s0.id, s2.id]);
    expect(r.next.dueAt).toBeNull();
    expect(r.effects).toEqual([]);
    expect(transition(r.next, { type: 'step_sent', stepId: s2.id, at: T0 }, T0, seq3).outcome).toBe('ignored');
    // …and cancels the open tasks (the owner's notice of the reply, if a reply rule made one): nobody follows up an opt-out.
    expect(transition(stopped, events.unsubscribe, T0, seq3).effects).toEqual([{ type: 'suppress', reason: 'unsubscribe' }, { type: 'cancel_tasks' }]);
  });

  it('a reply stops an active or paused enrollment whatever it waits for, and cancels its sends, tasks and timer', () => {
    for (const [name, e] of Object.entries(situations)) {
      if (isTerminal(e.state)) continue;
      const r = transition(e, { type: 'reply' }, T0, seq3);
      expect(r.next.state, name).toBe('replied');
      expect(r.next.dueAt).toBeNull();
      expect(r.effects).toEqual(expect.arrayContaining([{ type: 'cancel_send_requests' }, { type: 'cancel_tasks' }]));
      if (e.dueAt !== null) expect(r.effects).toContainEqual({ type: 'cancel_timer' });
    }
  });

  it('a move ends a live enrollment like a stop (timer, queued sends and tasks cancelled), naming the target', () => {
    for (const [name, e] of Object.entries(situations)) {
      if (isTerminal(e.state)) continue;
      const r = transition(e, events.move, T0, seq3);
      expect(r.next, name).toMatchObject({ state: 'moved', stateReason: 'moved to Sequence B', waitingFor: null, dueAt: null, pausedDueAt: null });
      expect(r.effects).toEqual(transition(e, events.stop, T0, seq3).effects);
    }
    // A send that was in flight when the move committed is recorded, and plans nothing.
    const moved = transition(situations['active, waiting for a send']!, events.move, T0, seq3).next;
    const sent = transition(moved, { type: 'step_sent', stepId: s0.id, at: T0 + MIN }, T0 + MIN, seq3);
    expect(sent).toMatchObject({ outcome: 'applied', effects: [], next: { state: 'moved', doneStepIds: [s0.id] } });
  });

  it('an enrollment that starts at a later step (its skipped steps done) runs that step first and never the skipped ones', () => {
    const e = transition(enrollment({ doneStepIds: [s0.id] }), { type: 'enrolled' }, T0, seq3).next;
    expect(e).toMatchObject({ waitingFor: 'timer', nextStepId: s1.id, dueAt: T0 + DAY });
    // An edit before the first step runs does not bring the skipped step back.
    expect(transition(e, { type: 'sequence_edited' }, T0, seq3).outcome).toBe('ignored');
    const due = transition(e, { type: 'step_due' }, T0 + DAY, seq3);
    expect(due.effects).toEqual([{ type: 'create_task', stepId: s1.id, kind: 'call', dueAt: T0 + DAY, title: 'Call' }]);
  });

  it('runs a due email step by asking for a send, and the send plans the next step from the send time', () => {
    const e = transition(enrollment(), { type: 'enrolled' }, T0, seq3).next;
    expect(e).toMatchObject({ waitingFor: 'timer', nextStepId: s0.id, dueAt: T0 });
    const due = transition(e, { type: 'step_due' }, T0, seq3);
    expect(due.effects).toEqual([{ type: 'create_send_request', stepId: s0.id, dueAt: T0 }]);
    expect(due.next.waitingFor).toBe('send');
    const sent = transition(due.next, { type: 'step_sent', stepId: s0.id, at: T0 + HOUR }, T0 + HOUR, seq3);
    expect(sent.next).toMatchObject({ waitingFor: 'timer', nextStepId: s1.id, lastStepId: s0.id, lastStepAt: T0 + HOUR, dueAt: T0 + HOUR + DAY });
  });

  it('a call step waits for its task; a task that does not block lets the sequence go on', () => {
    const waiting = transition(situations['active, timer due']!, { type: 'step_due' }, T0, seq3);
    expect(waiting.effects).toEqual([{ type: 'create_task', stepId: s1.id, kind: 'call', dueAt: T0, title: 'Call' }]);
    expect(waiting.next.waitingFor).toBe('task');
    const free = sequence([s0, { ...s1, waitForTask: false }, s2]);
    const going = transition(situations['active, timer due']!, { type: 'step_due' }, T0, free);
    expect(going.effects.map((f) => f.type)).toEqual(['create_task', 'schedule_timer']);
    expect(going.next).toMatchObject({ waitingFor: 'timer', nextStepId: s2.id, doneStepIds: [s0.id, s1.id] });
  });

  it('soft bounces stop only at the limit; a hard bounce suppresses', () => {
    let e = situations['active, waiting for its timer']!;
    for (let i = 1; i < defaultStopRules.maxSoftBounces; i++) {
      e = transition(e, { type: 'bounce', hard: false }, T0, seq3).next;
      expect(e.state).toBe('active');
    }
    expect(transition(e, { type: 'bounce', hard: false }, T0, seq3).next.state).toBe('bounced');
    expect(transition(e, { type: 'bounce', hard: true }, T0, seq3).effects).toContainEqual({ type: 'suppress', reason: 'hard_bounce' });
  });

  it('an out-of-office pauses until the return date, or the default when none (or a past one) is given', () => {
    const e = situations['active, waiting for its timer']!;
    expect(transition(e, { type: 'out_of_office', returnAt: T0 + 3 * DAY }, T0, seq3).next.dueAt).toBe(T0 + 3 * DAY);
    expect(transition(e, { type: 'out_of_office' }, T0, seq3).next.dueAt).toBe(T0 + 7 * DAY);
    expect(transition(e, { type: 'out_of_office', returnAt: T0 - DAY }, T0, seq3).next.dueAt).toBe(T0 + 7 * DAY);
    const ignoring = sequence(seq3.steps, { stopRules: { ...defaultStopRules, onOutOfOffice: 'ignore' } });
    expect(transition(e, { type: 'out_of_office' }, T0, ignoring).outcome).toBe('ignored');
  });

  it('a pause while waiting for a send cancels the queued request; the resume runs the step again from its timer', () => {
    const paused = transition(situations['active, waiting for a send']!, { type: 'pause' }, T0, seq3);
    expect(paused.effects).toContainEqual({ type: 'cancel_send_requests' });
    expect(paused.next).toMatchObject({ state: 'paused', waitingFor: 'timer', nextStepId: s0.id });
    const resumed = transition(paused.next, { type: 'resume' }, T0 + HOUR, seq3);
    expect(resumed.next).toMatchObject({ state: 'active', waitingFor: 'timer', nextStepId: s0.id, dueAt: T0 + HOUR });
    const due = transition(resumed.next, { type: 'step_due' }, T0 + HOUR, seq3);
    expect(due.effects).toEqual([{ type: 'create_send_request', stepId: s0.id, dueAt: T0 + HOUR }]);
  });

  // Regression: a step sent while its enrollment was paused (the pause came after the claim, or an
  // out-of-office arrived before an unknown send was found in the Sent folder) left lastStepAt at the
  // previous step, so on resume the next step's delay was counted from the wrong step and a
  // follow-up could go out minutes after this one.
  it('a step sent while paused counts as the last step: the next delay runs from its send time', () => {
    const waiting = enrollment({ waitingFor: 'send', nextStepId: s2.id, lastStepId: s1.id, lastStepAt: T0 - 10 * DAY, doneStepIds: [s0.id, s1.id] });
    const seq4 = sequence([...seq3.steps, step(3, 'email', { amount: 2, unit: 'days' })]);
    const paused = transition(waiting, { type: 'pause' }, T0, seq4).next;
    const sent = transition(paused, { type: 'step_sent', stepId: s2.id, at: T0 + MIN }, T0 + MIN, seq4);
    expect(sent.next).toMatchObject({ state: 'paused', lastStepId: s2.id, lastStepAt: T0 + MIN });
    const resumed = transition(sent.next, { type: 'resume' }, T0 + HOUR, seq4);
    expect(resumed.next).toMatchObject({ state: 'active', waitingFor: 'timer', nextStepId: seq4.steps[3]!.id, dueAt: T0 + MIN + 2 * DAY });
  });

  it('after an edit, a waiting enrollment moves to the new next step; a step under way is left alone', () => {
    const e = situations['active, waiting for its timer']!; // waits for s1
    const without = sequence([s0, { ...s1, archived: true, position: 1 }, { ...s2, position: 10 }]);
    const r = transition(e, { type: 'sequence_edited' }, T0, without);
    expect(r.next.nextStepId).toBe(s2.id);
    expect(r.effects).toEqual([{ type: 'schedule_timer', at: r.next.dueAt }]);
    expect(transition(situations['active, waiting for a send']!, { type: 'sequence_edited' }, T0, without).outcome).toBe('ignored');
    const empty = sequence([s0, { ...s1, archived: true }, { ...s2, archived: true }]);
    expect(transition(e, { type: 'sequence_edited' }, T0, empty).next.state).toBe('finished');
  });
});

// ---------------------------------------------------------------------------------------------
// Properties over random event streams, against a model of the outbox and the task list.

const zones = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Adelaide', 'America/St_Johns', 'Asia/Kathmandu', 'Pacific/Chatham'];
const countries: Array<[string | null, string | null]> = [[null, null], ['US', null], ['GB', 'ENG'], ['DE', 'BY'], ['IN', null], ['AU', 'SA'], ['FR', null]];
const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;

const windowArb: fc.Arbitrary<SendWindow> = fc.oneof(
  fc.constant<SendWindow>({ kind: 'any' }),
  fc
    .record({ days: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }), start: fc.integer({ min: 0, max: 95 }), end: fc.integer({ min: 1, max: 96 }) })
    .filter((w) => w.start !== w.end)
    .map(({ days, start, end }): SendWindow => ({ kind: 'hours', days: [...days].sort((a, b) => a - b) as Weekday[], start: hhmm(start * 15), end: hhmm(end * 15) })),
);

const delayArb: fc.Arbitrary<Delay> = fc.oneof(
  fc.record({ amount: fc.constantFrom(0, 5, 30, 240), unit: fc.constant('minutes' as const) }),
  fc.record({ amount: fc.integer({ min: 0, max: 72 }), unit: fc.constant('hours' as const) }),
  fc.record({ amount: fc.integer({ min: 0, max: 5 }), unit: fc.constantFrom('days' as const, 'business_days' as const) }),
);

interface StepSpec {
  kind: StepKind;
  delay: Delay;
  waitForTask: boolean;
  /** Call steps only (mk drops it elsewhere): retried after no answer, voicemail or busy. */
  retry: CallRetry | null;
}
const retryArb: fc.Arbitrary<CallRetry | null> = fc.option(
  fc.record({ attempts: fc.integer({ min: 1, max: 3 }), after: delayArb, on: fc.subarray([...retryableCallOutcomes], { minLength: 1 }) }),
  { nil: null },
);
const stepSpecArb: fc.Arbitrary<StepSpec> = fc.record({ kind: fc.constantFrom<StepKind>('email', 'email', 'call', 'manual', 'wait'), delay: delayArb, waitForTask: fc.boolean(), retry: retryArb });

type Op =
  | { op: 'advance'; ms: number }
  /** The scheduler wakes at the next due time (on time or late) and fires it. */
  | { op: 'fire'; late: number }
  | { op: 'claim' }
  | { op: 'send' }
  | { op: 'transport_failed'; permanent: boolean }
  | { op: 'complete_task'; call: boolean; outcome: number }
  | { op: 'signal'; ev: EngineEvent }
  | { op: 'edit'; kind: 'add' | 'remove' | 'swap' | 'delay'; a: number; b: number; spec: StepSpec };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: HOUR }), fc.integer({ min: 0, max: 4 * DAY })) }) },
  { weight: 8, arbitrary: fc.record({ op: fc.constant('fire' as const), late: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 * HOUR })) }) },
  { weight: 4, arbitrary: fc.constant<Op>({ op: 'claim' }) },
  { weight: 4, arbitrary: fc.constant<Op>({ op: 'send' }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('transport_failed' as const), permanent: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('complete_task' as const), call: fc.boolean(), outcome: fc.nat(6) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constant('signal' as const),
      // Pauses and resumes often, final signals rarely, so that streams live long enough to matter.
      ev: fc.oneof(
        { weight: 1, arbitrary: fc.constant<EngineEvent>({ type: 'reply' }) },
        { weight: 1, arbitrary: fc.constant<EngineEvent>({ type: 'bounce', hard: true }) },
        { weight: 2, arbitrary: fc.constant<EngineEvent>({ type: 'bounce', hard: false }) },
        { weight: 3, arbitrary: fc.option(fc.integer({ min: -DAY, max: 10 * DAY }), { nil: undefined }).map((d): EngineEvent => (d === undefined ? { type: 'out_of_office' } : { type: 'out_of_office', returnAt: T0 + d })) },
        { weight: 1, arbitrary: fc.constant<EngineEvent>({ type: 'unsubscribe' }) },
        { weight: 1, arbitrary: fc.constant<EngineEvent>({ type: 'meeting_booked' }) },
        { weight: 6, arbitrary: fc.option(fc.integer({ min: HOUR, max: 6 * DAY }), { nil: undefined }).map((d): EngineEvent => (d === undefined ? { type: 'pause' } : { type: 'pause', until: d })) },
        { weight: 6, arbitrary: fc.constant<EngineEvent>({ type: 'resume' }) },
        { weight: 1, arbitrary: fc.constant<EngineEvent>({ type: 'stop' }) },
      ),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('edit' as const), kind: fc.constantFrom('add' as const, 'remove' as const, 'swap' as const, 'delay' as const), a: fc.nat(20), b: fc.nat(20), spec: stepSpecArb }) },
);

const scenarioArb = fc.record({
  zone: fc.constantFrom(...zones),
  country: fc.constantFrom(...countries),
  window: windowArb,
  skipHolidays: fc.boolean(),
  jitterMinutes: fc.constantFrom(0, 15, 45, 90),
  steps: fc.array(stepSpecArb, { minLength: 1, maxLength: 6 }),
  startOffset: fc.integer({ min: 0, max: 300 * DAY }),
  ops: fc.array(opArb, { minLength: 5, maxLength: 80, size: 'large' }),
});

type RequestState = 'queued' | 'in_flight' | 'cancelled' | 'sent' | 'failed';

/**
 * Drives the transition function with an event stream and carries out its effects on a model of
 * the outbox (one request per step, the unique key's on-conflict rules of effects.ts) and the tasks,
 * and the sender's rules (claim re-checks the enrollment; a pause after the claim is seen at the
 * last look). Checks the properties after every transition.
 */
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function runScenario(sc: Scenario): void {
  let keyN = 0;
  const mk = (s: StepSpec, i: number): StepDef => ({
    id: `00000000-0000-7000-8000-${String(++keyN).padStart(12, '0')}`,
    key: `k${keyN}`,
    position: i * POSITION_GAP,
    kind: s.kind,
    delay: s.delay,
    archived: false,
    waitForTask: s.waitForTask,
    ...(s.kind === 'call' && s.retry ? { retry: s.retry } : {}),
  });
  let seq = sequence(sc.steps.map(mk), { window: sc.window, skipHolidays: sc.skipHolidays, jitterMinutes: sc.jitterMinutes });
  let now = T0 + sc.startOffset;
  let e = enrollment({ zone: sc.zone, country: sc.country[0], region: sc.country[1], enrolledAt: now });
  const requests = new Map<string, RequestState>();
  const tasks = new Map<string, 'open' | 'done' | 'cancelled'>();
  /** Calls logged per call task, as the calls route counts them into the event's `attempt`. */
  const attempts = new Map<string, number>();
  const sentSteps: string[] = [];
  const trail: string[] = [];

  const apply = (ev: EngineEvent): TransitionResult => {
    const before = e;
    const r = transition(e, ev, now, seq);
    trail.push(`${new Date(now).toISOString()} ${ev.type} ${before.state}/${before.waitingFor} -> ${r.outcome} ${r.next.state}/${r.next.waitingFor} [${r.effects.map((f) => f.type).join(',')}]`);
    const why = () => `\n${trail.join('\n')}`;
    if (r.outcome === 'ignored') expect(r.next, why()).toBe(before);
    for (const fx of r.effects) carryOut(fx, before, r, why);
    e = r.next;
    // Once final, always final (the absorbing states), except finished -> replied/bounced/unsubscribed.
    if (isTerminal(before.state) && before.state !== 'finished') expect(e.state, why()).toBe(before.state);
    // A reply always stops a live enrollment.
    if (ev.type === 'reply' && !isTerminal(before.state)) expect(e.state, why()).toBe('replied');
    checkState(why);
    return r;
  };

  const carryOut = (fx: Effect, before: Enrollment, r: TransitionResult, why: () => string) => {
    switch (fx.type) {
      case 'create_send_request': {
        // Never once final, never for a step already run, never for a step whose request was sent
        // or failed. A create while the step's request is still queued or in flight (a transient
        // failure requeued it during a pause, or a pause came after the claim) is absorbed by the
        // (enrollment, step) key: only a cancelled request is revived (effects.ts), so one step
        // never has two requests, and the model's sender sends each step at most once.
        expect(isTerminal(before.state), `create_send_request when ${before.state}${why()}`).toBe(false);
        expect(before.doneStepIds, why()).not.toContain(fx.stepId);
        const cur = requests.get(fx.stepId);
        expect(cur === 'sent' || cur === 'failed', `create_send_request for a step whose request is ${cur}${why()}`).toBe(false);
        if (cur === undefined || cur === 'cancelled') requests.set(fx.stepId, 'queued');
        expect(fx.dueAt, why()).toBe(now);
        break;
      }
      case 'cancel_send_requests':
        for (const [k, v] of requests) if (v === 'queued') requests.set(k, 'cancelled');
        break;
      case 'create_task':
        expect(isTerminal(before.state), why()).toBe(false);
        if (!tasks.has(fx.stepId)) tasks.set(fx.stepId, 'open');
        break;
      case 'cancel_tasks':
        for (const [k, v] of tasks) if (v === 'open') tasks.set(k, 'cancelled');
        break;
      case 'schedule_timer':
        expect(isTerminal(r.next.state), why()).toBe(false);
        expect(fx.at, why()).toBe(r.next.dueAt);
        break;
      case 'reschedule_task': {
        // Only the call just logged is tried again, only for a retryable outcome, within the step's
        // attempts, at an allowed time no earlier than now; the task reopens (the route keeps it open).
        const st = seq.steps.find((x) => x.id === fx.stepId);
        expect(st?.kind, why()).toBe('call');
        expect(st?.retry, why()).toBeDefined();
        expect(attempts.get(fx.stepId)!, why()).toBeLessThanOrEqual(st!.retry!.attempts);
        expect(tasks.get(fx.stepId), why()).toBe('done');
        expect(fx.dueAt, why()).toBeGreaterThanOrEqual(now);
        expect(isAllowed(fx.dueAt, calendarFor(seq, before)), why()).toBe(true);
        expect(r.next, why()).toBe(before);
        tasks.set(fx.stepId, 'open');
        break;
      }
      case 'cancel_timer':
      case 'suppress':
        break;
    }
  };

  const checkState = (why: () => string) => {
    const spec = calendarFor(seq, e);
    // Human time: a due time the engine plans (active) or keeps through a pause is allowed.
    if (e.state === 'active' && e.waitingFor === 'timer') {
      expect(e.dueAt, why()).not.toBeNull();
      expect(isAllowed(e.dueAt!, spec), `due ${new Date(e.dueAt!).toISOString()} not allowed${why()}`).toBe(true);
    }
    if (e.state === 'paused' && e.pausedDueAt !== null && e.pausedDueAt > 0) expect(isAllowed(e.pausedDueAt, spec), why()).toBe(true);
    // Nothing lost: what a live enrollment waits for exists.
    if (e.state === 'active' && e.waitingFor === 'send') expect(['queued', 'in_flight'], why()).toContain(requests.get(e.nextStepId!));
    if ((e.state === 'active' || e.state === 'paused') && e.waitingFor === 'task') expect(tasks.get(e.nextStepId!), why()).toBe('open');
    if (e.state === 'active') expect(e.waitingFor, why()).not.toBeNull();
    if (isTerminal(e.state)) expect(e.dueAt, why()).toBeNull();
    // At most once: no step was sent twice.
    expect(new Set(sentSteps).size, why()).toBe(sentSteps.length);
  };

  /** The sender's view: may this request go now? (the claim's and the last look's re-check) */
  const sendable = (stepId: string) => e.state === 'active' && e.waitingFor === 'send' && e.nextStepId === stepId;

  apply({ type: 'enrolled' });
  for (const o of sc.ops) {
    switch (o.op) {
      case 'advance':
        now += o.ms;
        break;
      case 'fire':
        // The scheduler: a due timer fires step_due when active, resume when paused.
        if (e.dueAt === null || (e.state !== 'active' && e.state !== 'paused')) break;
        now = Math.max(now, e.dueAt + o.late);
        apply({ type: e.state === 'paused' ? 'resume' : 'step_due' });
        break;
      case 'claim': {
        const q = [...requests].find(([, v]) => v === 'queued');
        if (!q) break;
        requests.set(q[0], sendable(q[0]) ? 'in_flight' : 'cancelled');
        break;
      }
      case 'send': {
        const f = [...requests].find(([, v]) => v === 'in_flight');
        if (!f) break;
        if (!sendable(f[0]) && e.state !== 'paused') {
          // The last look refuses (it refuses a paused one too; half the time the send won the race).
          requests.set(f[0], 'cancelled');
          break;
        }
        if (!sendable(f[0]) && now % 2 === 0) {
          requests.set(f[0], 'cancelled');
          break;
        }
        requests.set(f[0], 'sent');
        sentSteps.push(f[0]);
        apply({ type: 'step_sent', stepId: f[0], at: now });
        break;
      }
      case 'transport_failed': {
        const f = [...requests].find(([, v]) => v === 'in_flight');
        if (!f) break;
        if (o.permanent) {
          requests.set(f[0], 'failed');
          apply({ type: 'send_failed', stepId: f[0], permanent: true, reason: '550' });
        } else {
          requests.set(f[0], 'queued');
          apply({ type: 'send_failed', stepId: f[0], permanent: false, reason: '451' });
        }
        break;
      }
      case 'complete_task': {
        const t = [...tasks].find(([, v]) => v === 'open');
        if (!t) break;
        tasks.set(t[0], 'done');
        const outcomes = ['connected', 'no_answer', 'voicemail', 'busy', 'wrong_number', 'meeting_booked', 'not_interested'] as const;
        const kind = seq.steps.find((s) => s.id === t[0])!.kind;
        const attempt = (attempts.get(t[0]) ?? 0) + 1;
        attempts.set(t[0], attempt);
        const before = e;
        const r = apply(kind === 'call' ? { type: 'call_outcome', stepId: t[0], outcome: outcomes[o.outcome]!, attempt } : { type: 'task_completed', stepId: t[0] });
        // A wrong number ends the enrollment: nothing more is sent or called on its strength.
        if (kind === 'call' && outcomes[o.outcome] === 'wrong_number' && !isTerminal(before.state)) expect(e.state).toBe('stopped');
        if (r.effects.some((f) => f.type === 'reschedule_task')) expect(tasks.get(t[0])).toBe('open');
        break;
      }
      case 'signal': {
        const ev = o.ev.type === 'pause' && o.ev.until !== undefined ? { ...o.ev, until: now + o.ev.until } : o.ev.type === 'out_of_office' && o.ev.returnAt !== undefined ? { ...o.ev, returnAt: o.ev.returnAt - T0 + now } : o.ev;
        apply(ev);
        break;
      }
      case 'edit': {
        seq = edited(seq, o, mk);
        apply({ type: 'sequence_edited' });
        break;
      }
    }
  }
}

/** An edit as applyDefinition makes it: live steps re-placed by key, removed ones archived where they stood. */
function edited(seq: SequenceDef, o: Extract<Op, { op: 'edit' }>, mk: (s: StepSpec, i: number) => StepDef): SequenceDef {
  const live = seq.steps.filter((s) => !s.archived).sort((a, b) => a.position - b.position);
  const order = live.map((s) => ({ ...s }));
  if (o.kind === 'add') order.splice(o.a % (order.length + 1), 0, mk(o.spec, 0));
  else if (o.kind === 'remove' && order.length > 1) order.splice(o.a % order.length, 1);
  else if (o.kind === 'swap' && order.length > 1) {
    const a = o.a % order.length;
    const b = o.b % order.length;
    [order[a], order[b]] = [order[b]!, order[a]!];
  } else if (order.length) order[o.a % order.length] = { ...order[o.a % order.length]!, delay: o.spec.delay };
  const all = [...seq.steps.filter((s) => !order.some((x) => x.id === s.id)), ...order];
  const positions = placeSteps(
    seq.steps.map((s) => ({ id: s.id, key: s.key, position: s.position, archived: s.archived })),
    order.map((s) => s.key),
  );
  const liveKeys = new Set(order.map((s) => s.key));
  const steps = all.map((s) => ({ ...(order.find((x) => x.id === s.id) ?? s), position: positions.get(s.key)!, archived: !liveKeys.has(s.key) }));
  return { ...seq, steps: steps.sort((a, b) => a.position - b.position) };
}

describe('transition: properties over random event streams', () => {
  it('keeps the promises: one request per step, each sent at most once, none once final, due times allowed, nothing lost', () => {
    fc.assert(fc.property(scenarioArb, (sc) => runScenario(sc)), { numRuns: 600 });
  });

  it('a reply stops any live enrollment, whatever happened before', () => {
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        // Run the stream, then reply: the state is replied unless it was already final.
        const replied = { ...sc, ops: [...sc.ops, { op: 'signal', ev: { type: 'reply' } } as Op] };
        runScenario(replied);
      }),
      { numRuns: 200 },
    );
  });

  it('the edit rule never picks a step already run, nor one before the last step run', () => {
    fc.assert(
      fc.property(fc.array(stepSpecArb, { minLength: 1, maxLength: 8 }), fc.array(fc.boolean(), { maxLength: 8 }), fc.nat(8), (specs, doneMask, lastIdx) => {
        const steps = specs.map((s, i) => step(i, s.kind, s.delay, { archived: i % 3 === 2 }));
        const seq = sequence(steps);
        const done = steps.filter((_, i) => doneMask[i]).map((s) => s.id);
        const last = steps[lastIdx % steps.length]!;
        const next = nextStep(seq, { lastStepId: last.id, doneStepIds: done });
        if (next) {
          expect(done).not.toContain(next.id);
          expect(next.archived).toBe(false);
          expect(next.position).toBeGreaterThan(last.position);
        } else {
          expect(steps.filter((s) => !s.archived && !done.includes(s.id) && s.position > last.position)).toEqual([]);
        }
      }),
    );
  });
});

describe('transition: call outcomes', () => {
  const retry: CallRetry = { attempts: 2, after: { amount: 2, unit: 'hours' }, on: ['no_answer', 'busy'] };
  const callSeq = sequence([step(0, 'email', { amount: 0, unit: 'minutes' }), step(1, 'call', { amount: 1, unit: 'days' }, { retry }), step(2, 'email', { amount: 2, unit: 'days' })], {
    window: { kind: 'hours', days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
  });
  const [c0, c1, c2] = callSeq.steps as [StepDef, StepDef, StepDef];
  const waiting = enrollment({ waitingFor: 'task', nextStepId: c1.id, lastStepId: c0.id, lastStepAt: T0 - DAY, doneStepIds: [c0.id] });
  const at = T0 + 4 * HOUR; // Monday 16:00 UTC: two hours later is after 17:00, so Tuesday 09:00

  it('tries a call again after a retryable outcome, in the calling window, while attempts remain', () => {
    const r1 = transition(waiting, { type: 'call_outcome', stepId: c1.id, outcome: 'no_answer', attempt: 1 }, at, callSeq);
    expect(r1.next).toBe(waiting);
    expect(r1.effects).toEqual([{ type: 'reschedule_task', stepId: c1.id, dueAt: Date.UTC(2026, 5, 2, 9, 0) }]);
    expect(r1.note).toBe('call: no_answer; try 2 of 3');
    const r2 = transition(waiting, { type: 'call_outcome', stepId: c1.id, outcome: 'busy', attempt: 2 }, at, callSeq);
    expect(r2.effects[0]).toMatchObject({ type: 'reschedule_task' });
    // The third try was the last: the sequence moves on to its next step.
    const r3 = transition(waiting, { type: 'call_outcome', stepId: c1.id, outcome: 'no_answer', attempt: 3 }, at, callSeq);
    expect(r3.next).toMatchObject({ state: 'active', waitingFor: 'timer', nextStepId: c2.id, doneStepIds: [c0.id, c1.id] });
  });

  it('moves on after an outcome the rule does not name (voicemail here) and after a connected call', () => {
    for (const outcome of ['voicemail', 'connected'] as const) {
      const r = transition(waiting, { type: 'call_outcome', stepId: c1.id, outcome, attempt: 1 }, at, callSeq);
      expect(r.next).toMatchObject({ waitingFor: 'timer', nextStepId: c2.id });
      expect(r.effects.some((f) => f.type === 'reschedule_task')).toBe(false);
    }
  });

  it('stops on a wrong number or no interest, finishes on a meeting booked', () => {
    expect(transition(waiting, { type: 'call_outcome', stepId: c1.id, outcome: 'wrong_number' }, at, callSeq).next).toMatchObject({ state: 'stopped', stateReason: 'wrong number (call)' });
    expect(transition(waiting, { type: 'call_outcome', stepId: c1.id, outcome: 'not_interested' }, at, callSeq).next).toMatchObject({ state: 'stopped' });
    expect(transition(waiting, { type: 'call_outcome', stepId: c1.id, outcome: 'meeting_booked' }, at, callSeq).next).toMatchObject({ state: 'finished' });
  });
});

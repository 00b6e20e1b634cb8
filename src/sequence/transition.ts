import type { Delay } from '../calendar/index.ts';
import { holds, noFacts, type BranchFacts } from './conditions.ts';
import type { CallOutcome, CallRetry, Effect, EngineEvent, Enrollment, ReplyRuleIntent, SequenceDef, StepDef, TransitionResult } from './model.ts';
import { isTerminal, NO_ARM } from './model.ts';
import { armExit, dueTime, findStep, nextStep } from './plan.ts';
import { armedView, joinExperiments } from './arm-view.ts';

const DAY = 86_400_000;

/**
 * The enrollment state machine: (enrollment, event, now, sequence) -> (next state, effects).
 * Pure: no clock, no randomness, no I/O. The enrollment service applies the result durably, in
 * one transaction with the event journal.
 *
 * Waits are "signal or timeout" (STYLE habit 5): while waiting for its timer an enrollment
 * leaves on the timer (step_due, or resume when paused) or on a signal (reply, bounce, ooo,
 * unsubscribe, meeting, stop), whichever comes first.
 */
export function transition(e0: Enrollment, ev: EngineEvent, now: number, seq: SequenceDef): TransitionResult {
  // A sequence experiment's arm is chosen at enrollment and kept; every transition then runs on the
  // sequence as the enrollment's arms shape it (sequence/arm-view.ts).
  const e = ev.type === 'enrolled' ? joinExperiments(e0, seq) : e0;
  try {
    return step(e, ev, now, armedView(seq, e));
  } catch (err) {
    // Only planning can throw (the calendar refuses a lead's country or region, or finds no
    // allowed time within a year). That is this enrollment's problem, not its batch's: it fails
    // with the reason, visibly, instead of rolling back the scheduler's whole batch on every wake.
    if (isTerminal(e.state)) return ignore(e, `cannot apply ${ev.type}: ${(err as Error).message}`);
    return stopAs(e, 'failed', `cannot plan the next step: ${(err as Error).message}`);
  }
}

function step(e: Enrollment, ev: EngineEvent, now: number, seq: SequenceDef): TransitionResult {
  switch (ev.type) {
    case 'enrolled':
      if (e.state !== 'active' || e.lastStepId || e.waitingFor) return ignore(e, 'already started');
      // A subsequence starts no earlier than its `after`: the first delay counts from then.
      return applied(...planFrom(e, seq, Math.max(e.enrolledAt, ev.notBefore ?? e.enrolledAt), now));

    case 'step_due':
      return onStepDue(e, now, seq, ev.facts);

    case 'step_sent': {
      if (e.doneStepIds.includes(ev.stepId)) return ignore(e, 'step already recorded as done');
      const done = { ...e, doneStepIds: [...e.doneStepIds, ev.stepId] };
      // A send can land after a stop raced it (the sender claimed before the reply was recorded):
      // record that the step ran, but plan nothing.
      if (isTerminal(e.state)) return applied(done, [], 'sent after a stop');
      // Sent while paused: the pause came after the claim, or an out-of-office paused it before an
      // unknown send was found in the Sent folder. The step ran, so on resume the next step's delay
      // counts from this send (as after a task completed while paused), not from the step before.
      if (e.state === 'paused' && e.nextStepId === ev.stepId) {
        return applied({ ...markDone(e, ev.stepId, ev.at), waitingFor: null, nextStepId: null, pausedDueAt: null }, [], 'sent while paused; continues on resume');
      }
      if (e.waitingFor !== 'send' || e.nextStepId !== ev.stepId) return applied(done, [], 'sent step was not the awaited one');
      return applied(...planFrom({ ...done, lastStepId: ev.stepId, lastStepAt: ev.at }, seq, ev.at, now));
    }

    case 'send_failed':
      if (isTerminal(e.state)) return ignore(e, `already ${e.state}`);
      if (!ev.permanent) return ignore(e, 'transient failure: the sender retries');
      return stopAs(e, 'failed', `send failed: ${ev.reason}`);

    case 'reply':
      // A reply after the last step still counts: the prospect answered the sequence.
      if (isTerminal(e.state) && e.state !== 'finished') return ignore(e, `already ${e.state}`);
      return onReply(stopAs(e, 'replied', ev.messageId ? `reply ${ev.messageId}` : 'reply'), ev, now, seq);

    case 'bounce': {
      // A bounce of the last step still counts, as a reply does: the enrollment ends bounced, and
      // a call task that did not hold the sequence (wait_for_task: false) is cancelled with it.
      if (isTerminal(e.state) && e.state !== 'finished') return ignore(e, `already ${e.state}`);
      if (ev.hard) {
        const r = stopAs(e, 'bounced', ev.reason ?? 'hard bounce');
        r.effects.push({ type: 'suppress', reason: 'hard_bounce' });
        return r;
      }
      const soft = { ...e, softBounces: e.softBounces + 1 };
      if (soft.softBounces >= seq.stopRules.maxSoftBounces) return stopAs(soft, 'bounced', `${soft.softBounces} soft bounces`);
      return applied(soft, [], 'soft bounce counted');
    }

    case 'out_of_office': {
      if (isTerminal(e.state)) return ignore(e, `already ${e.state}`);
      if (seq.stopRules.onOutOfOffice === 'ignore') return ignore(e, 'out-of-office ignored by the stop rules');
      const until = ev.returnAt !== undefined && ev.returnAt > now ? ev.returnAt : now + seq.stopRules.oooDefaultPauseDays * DAY;
      return pause(e, until, 'out of office');
    }

    case 'unsubscribe': {
      const effects: Effect[] = [{ type: 'suppress', reason: 'unsubscribe' }];
      // Suppression applies whatever the state (promise 6); the state changes unless already final.
      // A replied enrollment may hold its owner's notice of the reply (a reply rule): an opt-out
      // cancels it, nobody follows up with a person who opted out.
      if (e.state === 'replied') return applied(e, [...effects, { type: 'cancel_tasks' }], 'already replied; address suppressed, open tasks cancelled');
      if (isTerminal(e.state) && e.state !== 'finished') return applied(e, effects, `already ${e.state}; address suppressed`);
      const r = stopAs(e, 'unsubscribed', ev.source ?? 'unsubscribe');
      r.effects.push(...effects);
      return r;
    }

    case 'meeting_booked':
      if (isTerminal(e.state)) return ignore(e, `already ${e.state}`);
      if (seq.stopRules.onMeetingBooked === 'continue') return ignore(e, 'meetings do not stop this sequence');
      return stopAs(e, 'finished', 'meeting booked');

    case 'call_outcome': {
      if (isTerminal(e.state)) return ignore(e, `already ${e.state}`);
      if (ev.outcome === 'meeting_booked' && seq.stopRules.onMeetingBooked === 'finish') return stopAs(e, 'finished', 'meeting booked on a call');
      if (ev.outcome === 'not_interested') return stopAs(e, 'stopped', 'not interested (call)');
      // The number reaches someone else: no later step should call or mail on the strength of it.
      if (ev.outcome === 'wrong_number') return stopAs(e, 'stopped', 'wrong number (call)');
      const retry = retryOf(seq, ev.stepId, ev.outcome, ev.attempt ?? 1);
      if (retry) {
        const step = findStep(seq, ev.stepId)!;
        const attempt = ev.attempt ?? 1;
        const at = dueTime(seq, e, { ...step, delay: retry.after }, now, now, `${step.id}:retry:${attempt}`);
        return applied(e, [{ type: 'reschedule_task', stepId: step.id, dueAt: at }], `call: ${ev.outcome}; try ${attempt + 1} of ${retry.attempts + 1}`);
      }
      return completeTask(e, ev.stepId, now, seq, `call: ${ev.outcome}`);
    }

    case 'task_completed':
      if (isTerminal(e.state)) return ignore(e, `already ${e.state}`);
      return completeTask(e, ev.stepId, now, seq, `task ${ev.outcome ?? 'done'}`);

    case 'pause':
      if (e.state !== 'active') return ignore(e, `cannot pause when ${e.state}`);
      return pause(e, ev.until ?? null, ev.reason ?? 'paused');

    case 'resume':
      if (e.state !== 'paused') return ignore(e, `cannot resume when ${e.state}`);
      return resume(e, now, seq);

    case 'stop':
      // A finished enrollment can still hold an open task (a call that did not hold the sequence),
      // and a replied one its owner's notice of the reply (stop_rules.on_reply notify): a stop (by
      // a person, or a suppression of the address) cancels it and keeps the state.
      if (e.state === 'finished' || e.state === 'replied') return applied(e, [{ type: 'cancel_tasks' }], `already ${e.state}; open tasks cancelled`);
      if (isTerminal(e.state)) return ignore(e, `already ${e.state}`);
      return stopAs(e, 'stopped', ev.reason ?? 'stopped by a person');

    case 'move':
      // Ends like a stop (timer, queued sends and open tasks cancelled; a send already in flight
      // finishes under the outbox's rules and is recorded here as sent after a stop); the new
      // enrollment is written by sequence/move.ts in the same transaction.
      if (isTerminal(e.state)) return ignore(e, `already ${e.state}`);
      return stopAs(e, 'moved', `moved to ${ev.toSequenceName}`);

    case 'sequence_edited':
      return onEdit(e, now, seq);
  }
}

function onStepDue(e: Enrollment, now: number, seq: SequenceDef, facts: BranchFacts | undefined): TransitionResult {
  if (e.state !== 'active') return ignore(e, `not active (${e.state})`);
  if (e.waitingFor !== 'timer' || e.dueAt === null) return ignore(e, `waiting for ${e.waitingFor ?? 'nothing'}`);
  if (e.dueAt > now) return ignore(e, 'not due yet');
  let step = findStep(seq, e.nextStepId);
  if (!step || step.archived || e.doneStepIds.includes(step.id)) {
    // The step was removed (or already run) after the timer was set: apply the edit rule now.
    const exit = armExit(seq, e);
    if (exit) return leaveArm(e, seq, exit, now);
    step = nextStep(seq, e);
    if (!step) return finish(e);
  }
  return runStep({ ...e, nextStepId: step.id }, step, now, seq, facts);
}

/**
 * Decides a branch: the first arm whose condition holds on the facts (an arm without one always
 * does), or NO_ARM. The choice is recorded once, by branch step id; a branch already decided for
 * this enrollment keeps its choice. Then the edit rule plans the chosen arm's first step (or, for
 * NO_ARM, the step after the branch); an empty arm that ends or moves does so at once.
 */
function decideBranch(e: Enrollment, step: StepDef, now: number, seq: SequenceDef, facts: BranchFacts): TransitionResult {
  const idOf = (key: string) => seq.steps.find((s) => s.key === key)?.id;
  const before = e.branchChoices?.[step.id];
  const chosen = before ?? (step.arms ?? []).find((a) => !a.when || holds(a.when, facts, idOf))?.key ?? NO_ARM;
  const decided: Enrollment = { ...markDone(e, step.id, now), branchChoices: { ...e.branchChoices, [step.id]: chosen } };
  const [next, effects] = planFrom(decided, seq, now, now);
  return applied(next, effects, `branch ${step.key}: ${chosen === NO_ARM ? 'no arm matched; continues after it' : `arm ${chosen}`}${before !== undefined ? ' (decided before)' : ''}`);
}

/** The end of an arm that does not rejoin: the enrollment finishes, or moves to another sequence. */
function leaveArm(e: Enrollment, seq: SequenceDef, exit: NonNullable<ReturnType<typeof armExit>>, now: number): TransitionResult {
  const where = `arm ${exit.arm.key} of ${exit.branch.key}`;
  if (exit.then === 'end') return finish(e, `${where} ends the sequence`);
  const r = stopAs(e, 'moved', `${where} moves to ${exit.then.moveTo}`);
  r.effects.push(moveEffect(seq, e, exit.branch, exit.then.moveTo, exit.then.after, now, r.next.stateReason!));
  return r;
}

/** The move to another sequence: its first step no earlier than `after` from now (in this enrollment's calendar). */
function moveEffect(seq: SequenceDef, e: Enrollment, anchor: StepDef, sequenceKey: string, after: Delay, now: number, reason: string): Effect {
  const notBefore = after.amount === 0 ? now : dueTime(seq, e, { ...anchor, delay: after }, now, now, `${anchor.id}:move:${sequenceKey}`);
  return { type: 'move_to_sequence', sequenceKey, notBefore, reason };
}

/** A reply's intent rule (stop_rules.on_reply), on top of the stop: a task for the owner, or a move. */
function onReply(r: TransitionResult, ev: Extract<EngineEvent, { type: 'reply' }>, now: number, seq: SequenceDef): TransitionResult {
  const rule = ev.intent ? seq.stopRules.onReply?.[ev.intent as ReplyRuleIntent] : undefined;
  if (!rule) return r;
  const who = ev.from ?? 'the lead';
  if (rule === 'notify') {
    r.effects.push({ type: 'notify_owner', title: `${ev.intent === 'interested' ? 'Interested' : capitalise(ev.intent!.replace(/_/g, ' '))} reply from ${who}: follow up` });
  } else {
    const anchor = findStep(seq, r.next.lastStepId) ?? seq.steps[0];
    if (anchor) r.effects.push(moveEffect(seq, r.next, anchor, rule.moveTo, rule.after, now, `${ev.intent} reply moves to ${rule.moveTo}`));
  }
  r.note = `reply (${ev.intent}): ${rule === 'notify' ? 'owner notified' : `moves to ${rule.moveTo}`}`;
  return r;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function runStep(e: Enrollment, step: StepDef, now: number, seq: SequenceDef, facts: BranchFacts = noFacts): TransitionResult {
  switch (step.kind) {
    case 'branch':
      return decideBranch(e, step, now, seq, facts);
    case 'email':
      return applied({ ...e, waitingFor: 'send', dueAt: null }, [{ type: 'create_send_request', stepId: step.id, dueAt: now }]);
    case 'call':
    case 'manual': {
      const task: Effect = { type: 'create_task', stepId: step.id, kind: step.kind, dueAt: now, title: step.title ?? (step.kind === 'call' ? 'Call' : 'Task') };
      if (step.waitForTask === false) {
        const [next, effects] = planFrom(markDone(e, step.id, now), seq, now, now);
        // The last step of an arm that moves the lead: the move ends this enrollment as a stop
        // does (open tasks cancelled), so a task that would not hold it is not opened either.
        if (next.state === 'moved') return applied(next, effects);
        return applied(next, [task, ...effects]);
      }
      return applied({ ...e, waitingFor: 'task', dueAt: null }, [task]);
    }
    case 'wait': {
      const [next, effects] = planFrom(markDone(e, step.id, now), seq, now, now);
      return applied(next, effects);
    }
  }
}

function completeTask(e: Enrollment, stepId: string, now: number, seq: SequenceDef, note: string): TransitionResult {
  if (e.doneStepIds.includes(stepId)) return ignore(e, 'task already completed');
  if (e.waitingFor !== 'task' || e.nextStepId !== stepId) return applied({ ...e, doneStepIds: [...e.doneStepIds, stepId] }, [], `${note} (not the awaited step)`);
  const done = markDone(e, stepId, now);
  if (e.state === 'paused') return applied({ ...done, waitingFor: null, nextStepId: null }, [], `${note}; continues on resume`);
  const [next, effects] = planFrom(done, seq, now, now);
  return applied(next, effects, note);
}

/** The step's retry rule when this outcome of this try calls for another try, else undefined. */
function retryOf(seq: SequenceDef, stepId: string, outcome: CallOutcome, attempt: number): CallRetry | undefined {
  const r = findStep(seq, stepId)?.retry;
  if (!r || !(r.on as readonly string[]).includes(outcome) || attempt > r.attempts) return undefined;
  return r;
}

function markDone(e: Enrollment, stepId: string, at: number): Enrollment {
  return { ...e, lastStepId: stepId, lastStepAt: at, doneStepIds: e.doneStepIds.includes(stepId) ? e.doneStepIds : [...e.doneStepIds, stepId] };
}

/** Chooses the next step by the edit rule and sets its timer, or finishes. */
function planFrom(e: Enrollment, seq: SequenceDef, from: number, now: number): [Enrollment, Effect[]] {
  const exit = armExit(seq, e);
  if (exit) {
    const r = leaveArm(e, seq, exit, now);
    return [r.next, r.effects];
  }
  const step = nextStep(seq, e);
  if (!step) {
    const r = finish(e);
    return [r.next, r.effects];
  }
  const at = dueTime(seq, e, step, from, now);
  return [{ ...e, state: 'active', waitingFor: 'timer', nextStepId: step.id, dueAt: at, pausedDueAt: null }, [{ type: 'schedule_timer', at }]];
}

function finish(e: Enrollment, reason = 'completed every step'): TransitionResult {
  return applied({ ...e, state: 'finished', stateReason: reason, waitingFor: null, nextStepId: null, dueAt: null, pausedDueAt: null }, e.dueAt !== null ? [{ type: 'cancel_timer' }] : []);
}

function stopAs(e: Enrollment, state: Enrollment['state'], reason: string): TransitionResult {
  const effects: Effect[] = [];
  if (e.dueAt !== null) effects.push({ type: 'cancel_timer' });
  effects.push({ type: 'cancel_send_requests' }, { type: 'cancel_tasks' });
  return applied({ ...e, state, stateReason: reason, waitingFor: null, dueAt: null, pausedDueAt: null }, effects);
}

/**
 * A pause keeps the enrollment's place. A queued send is cancelled (the sender would refuse it
 * anyway: the enrollment is no longer active) and the step runs again from its timer on resume;
 * the send request is revived then, under the same key, only if it was never handed to a server.
 */
function pause(e: Enrollment, until: number | null, reason: string): TransitionResult {
  const effects: Effect[] = [];
  let next: Enrollment = { ...e, state: 'paused', stateReason: reason };
  if (e.waitingFor === 'send') {
    effects.push({ type: 'cancel_send_requests' });
    next = { ...next, waitingFor: 'timer', pausedDueAt: e.dueAt ?? 0 };
  } else if (e.waitingFor === 'timer') {
    next = { ...next, pausedDueAt: e.state === 'paused' ? e.pausedDueAt : e.dueAt };
  }
  next.dueAt = until;
  if (until !== null) effects.push({ type: 'schedule_timer', at: until });
  else if (e.dueAt !== null) effects.push({ type: 'cancel_timer' });
  return applied(next, effects, reason);
}

function resume(e: Enrollment, now: number, seq: SequenceDef): TransitionResult {
  const active: Enrollment = { ...e, state: 'active', stateReason: null, dueAt: null, pausedDueAt: null };
  if (e.waitingFor === 'task') return applied(active, e.dueAt !== null ? [{ type: 'cancel_timer' }] : []);
  const step = findStep(seq, e.nextStepId);
  if (e.waitingFor !== 'timer' || !step || step.archived || e.doneStepIds.includes(step.id)) {
    const [next, effects] = planFrom(active, seq, e.lastStepAt ?? e.enrolledAt, now);
    return applied(next, effects, 'resumed');
  }
  // Keep the original due time if it is still ahead; otherwise the next allowed moment from now.
  const at = e.pausedDueAt !== null && e.pausedDueAt >= now ? e.pausedDueAt : dueTime(seq, e, { ...step, delay: { amount: 0, unit: 'minutes' } }, now, now, `${step.id}:resume:${now}`);
  return applied({ ...active, waitingFor: 'timer', dueAt: at }, [{ type: 'schedule_timer', at }], 'resumed');
}

/**
 * After an edit, an enrollment waiting on its timer is re-planned only if its next step changed
 * (removed, moved behind it, or a new step now comes first). Its due time is otherwise kept:
 * a due time is computed once (promise 4); a changed delay applies from the next step planned.
 * An enrollment whose send or task is under way is left alone: that step is already running.
 */
function onEdit(e: Enrollment, now: number, seq: SequenceDef): TransitionResult {
  if (isTerminal(e.state)) return ignore(e, `already ${e.state}`);
  if (e.waitingFor === 'send' || e.waitingFor === 'task') return ignore(e, 'current step under way');
  // The edit removed what was left of the arm it is in: the arm's end applies now.
  const exit = e.state === 'active' ? armExit(seq, e) : undefined;
  if (exit) return leaveArm(e, seq, exit, now);
  const want = nextStep(seq, e);
  if (want && want.id === e.nextStepId) return ignore(e, 'next step unchanged');
  if (!want) {
    if (e.state === 'paused') return applied({ ...e, nextStepId: null, waitingFor: null, pausedDueAt: null }, [], 'no steps left; finishes on resume');
    return finish(e);
  }
  const at = dueTime(seq, e, want, e.lastStepAt ?? e.enrolledAt, now);
  if (e.state === 'paused') return applied({ ...e, nextStepId: want.id, waitingFor: 'timer', pausedDueAt: at }, [], 'next step changed by an edit');
  return applied({ ...e, nextStepId: want.id, waitingFor: 'timer', dueAt: at }, [{ type: 'schedule_timer', at }], 'next step changed by an edit');
}

function applied(next: Enrollment, effects: Effect[] = [], note?: string): TransitionResult {
  return note === undefined ? { outcome: 'applied', next, effects } : { outcome: 'applied', next, effects, note };
}

function ignore(e: Enrollment, note: string): TransitionResult {
  return { outcome: 'ignored', next: e, effects: [], note };
}

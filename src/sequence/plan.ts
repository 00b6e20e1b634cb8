import { hashString } from '../common/random.ts';
import { computeDue, type CalendarSpec, type Delay } from '../calendar/index.ts';
import { NO_ARM, type ArmThen, type BranchArm, type Enrollment, type SequenceDef, type StepDef } from './model.ts';

/**
 * The edit rule. An enrollment continues with the first live step, in the sequence's current
 * order, that it has not run and that stands after the last step it ran (by that step's current
 * position, or the position it had when it was removed). So:
 *   - a step it ran is never run again, whatever reordering happens (doneStepIds, and the unique
 *     (enrollment, step) key below it);
 *   - a step inserted before its current point is not run for it: it would arrive out of context;
 *   - a step inserted or moved after its point is run in turn; a removed step is skipped;
 *   - no enrollment is lost: one whose point is past every live step finishes;
 *   - a step in a branch arm runs only for an enrollment that chose that arm at that branch: the
 *     arms of a branch not yet decided, and every arm not chosen, are skipped. A choice is made
 *     once (branchChoices), so no edit can lead an enrollment into a second arm of one branch.
 */
export function nextStep(seq: SequenceDef, e: Pick<Enrollment, 'lastStepId' | 'doneStepIds' | 'branchChoices'>): StepDef | undefined {
  const done = new Set(e.doneStepIds);
  const last = e.lastStepId ? seq.steps.find((s) => s.id === e.lastStepId) : undefined;
  const after = last ? last.position : -Infinity;
  const chose = e.branchChoices ?? {};
  let best: StepDef | undefined;
  for (const s of seq.steps) {
    if (s.archived || done.has(s.id) || s.position <= after) continue;
    if (s.arm && chose[s.arm.branchId] !== s.arm.key) continue;
    if (!best || s.position < best.position) best = s;
  }
  return best;
}

/**
 * What ends the arm the enrollment has just left, when it is not a rejoin: the arm it chose at the
 * branch it last passed, if its last step run is that branch or a step of that arm and no step of
 * the arm is left to run. Undefined when it is not at the end of an arm, or the arm rejoins.
 */
export function armExit(seq: SequenceDef, e: Pick<Enrollment, 'lastStepId' | 'doneStepIds' | 'branchChoices'>): { branch: StepDef; arm: BranchArm; then: Exclude<ArmThen, 'continue'> } | undefined {
  const last = findStep(seq, e.lastStepId);
  if (!last) return undefined;
  const branchId = last.kind === 'branch' ? last.id : last.arm?.branchId;
  if (!branchId) return undefined;
  const key = e.branchChoices?.[branchId];
  if (key === undefined || key === NO_ARM) return undefined;
  if (last.arm && last.arm.key !== key) return undefined;
  const branch = findStep(seq, branchId);
  const arm = branch?.arms?.find((a) => a.key === key);
  if (!branch || !arm || arm.then === 'continue') return undefined;
  const next = nextStep(seq, e);
  if (next?.arm && next.arm.branchId === branchId) return undefined;
  return { branch, arm, then: arm.then };
}

export function findStep(seq: SequenceDef, id: string | null): StepDef | undefined {
  return id ? seq.steps.find((s) => s.id === id) : undefined;
}

/** The prospect's calendar for a step: the step's own hours (a timing arm's, a part of the sequence's window) or the sequence's window. */
export function calendarFor(seq: SequenceDef, e: Pick<Enrollment, 'zone' | 'country' | 'region'>, step?: Pick<StepDef, 'window'>): CalendarSpec {
  return {
    zone: e.zone,
    window: step?.window ?? seq.window,
    ...(e.country ? { country: e.country } : {}),
    ...(e.region ? { region: e.region } : {}),
    skipHolidays: seq.skipHolidays,
    jitterMinutes: seq.jitterMinutes,
  };
}

/**
 * The random offset of a step inside its window, derived from the enrollment and the step: the
 * same enrollment always gets the same offset for the same step, so the transition stays a pure
 * function and a replay computes the same instant, while a batch of enrollments spreads out.
 */
export function jitterFor(enrollmentId: string, label: string): number {
  return hashString(`${enrollmentId}:${label}`) / 4294967296;
}

/**
 * When a step falls due: its delay counted from `from`, then moved into the window. A due time
 * already in the past (after a resume or an edit) becomes the next allowed moment from now.
 */
export function dueTime(seq: SequenceDef, e: Enrollment, step: StepDef, from: number, now: number, label = step.id): number {
  const spec = calendarFor(seq, e, step);
  const due = computeDue(from, step.delay, spec, jitterFor(e.id, label));
  if (due >= now) return due;
  return computeDue(now, zeroDelay, spec, jitterFor(e.id, `${label}:late`));
}

const zeroDelay: Delay = { amount: 0, unit: 'minutes' };

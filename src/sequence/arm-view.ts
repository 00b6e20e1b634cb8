import { NO_ARM, type Enrollment, type SequenceDef, type SequenceExperiment, type StepDef } from './model.ts';
import { armFor } from '../experiments/assignment.ts';

/**
 * Sequence experiments: arms that fix choices on several steps (a variant here, a body there) and
 * arms that differ in timing (a step's delay, its send hours, the order of some steps). Pure.
 *
 * The engine never learns about arms. Each transition runs on the sequence as the enrollment's arms
 * shape it (`armedView`): the same steps with the arm's delays, hours, places and variants. So the
 * calendar's due-time logic is the only one that ever places a send (promise 4), and an arm's hours,
 * being a part of the sequence's window (checked when the definition is read), keep every send
 * inside the prospect's window.
 *
 * The arm is chosen once, at enrollment (`joinExperiments`), by the same weighted rendezvous hash
 * as a step's variants (assignment.ts), keyed by (sequence, experiment key, enrollment), and stored
 * on the enrollment. Stored, not recomputed: an edit of the weights or arms after enrollment moves
 * no one, a retry or a restart reads the same record, and an enrollment made before the experiment
 * existed stays out of it (its due times were planned without it; it would not be exposed to the
 * arm it would be counted in). Once an automatic winner is declared (auto-winner.ts),
 * enrollments made from then on all get it; those before keep their arm.
 */

/** The hash's experiment id: stable across edits, since an experiment's key is its identity. */
export function experimentHashId(sequenceId: string, key: string): string {
  return `sequence:${sequenceId}:experiment:${key}`;
}

/** The enrollment with an arm for each experiment of the sequence (at enrollment; NO_ARM when no arm has weight). */
export function joinExperiments(e: Enrollment, seq: SequenceDef): Enrollment {
  const exps = seq.experiments ?? [];
  if (exps.length === 0) return e;
  const chosen: Record<string, string> = { ...e.experimentArms };
  let changed = false;
  for (const x of exps) {
    if (chosen[x.key] !== undefined) continue;
    // After a declared winner, a new enrollment gets the winner (armFor); it is marked after the
    // winner in the figures (ops/figures.ts), outside the experiment.
    const winner = x.winner ? { armId: x.winner.armKey, since: x.winner.since } : null;
    chosen[x.key] = armFor(experimentHashId(seq.id, x.key), e, x.arms.map((a) => ({ id: a.key, weight: a.weight })), winner) ?? NO_ARM;
    changed = true;
  }
  return changed ? { ...e, experimentArms: chosen } : e;
}

/** The arm of `x` this enrollment runs, if it is in the experiment and the arm still exists. */
export function armOf(x: SequenceExperiment, e: Pick<Enrollment, 'experimentArms'>) {
  const key = e.experimentArms?.[x.key];
  return key === undefined || key === NO_ARM ? undefined : x.arms.find((a) => a.key === key);
}

/**
 * The sequence as this enrollment's arms shape it. Unchanged (the same object) when it is in no
 * experiment. An order arm gives the listed steps the places of the same steps in the sequence, in
 * its order; each place keeps its delay (the rhythm stays, the steps change places), unless the arm
 * sets a delay on the step itself.
 */
export function armedView(seq: SequenceDef, e: Pick<Enrollment, 'experimentArms'>): SequenceDef {
  const arms = (seq.experiments ?? []).map((x) => armOf(x, e)).filter((a) => a !== undefined);
  if (arms.length === 0) return seq;
  const steps = new Map(seq.steps.map((s) => [s.id, { ...s }]));
  for (const arm of arms) {
    if (arm.order && arm.order.length > 1) {
      const listed = arm.order.map((id) => seq.steps.find((s) => s.id === id)).filter((s): s is StepDef => s !== undefined);
      const places = listed.map((s) => ({ position: s.position, delay: s.delay })).sort((a, b) => a.position - b.position);
      listed.forEach((s, i) => Object.assign(steps.get(s.id)!, places[i]));
    }
    for (const [id, c] of Object.entries(arm.steps)) {
      const s = steps.get(id);
      if (!s) continue;
      if (c.delay) s.delay = c.delay;
      if (c.window) s.window = c.window;
      // The arm's variant, whatever the step's own weights or declared winner say.
      if (c.variantId && s.variants?.some((v) => v.id === c.variantId)) {
        s.variants = [{ id: c.variantId, weight: 1 }];
        s.winner = null;
      }
    }
  }
  return { ...seq, steps: [...steps.values()].sort((a, b) => a.position - b.position) };
}

/** The steps an experiment's arms touch (choices or order): its exposure is the first of them run. */
export function experimentSteps(x: SequenceExperiment): string[] {
  const ids = new Set<string>();
  for (const a of x.arms) {
    for (const id of Object.keys(a.steps)) ids.add(id);
    for (const id of a.order ?? []) ids.add(id);
  }
  return [...ids];
}

import { z } from 'zod';
import type { SendWindow } from '../calendar/index.ts';
import type { Delay } from '../calendar/index.ts';
import { experimentSchema, fromDocument as settingsFromDocument, toDocument as settingsToDocument, type ExperimentSettings } from '../experiments/settings.ts';

/**
 * The definition file's `experiments:`: experiments declared on the sequence, whose arms fix
 * choices on several steps (a variant, a delay, send hours) or run some steps in another order
 * (docs/experiments.md "Sequence experiments"). Steps and variants are named by key, a step's and a
 * variant's identity for life, so an edit that keeps the keys keeps the experiment.
 *
 * Rules, each refused with its path when broken:
 *   - two or more arms with distinct keys, at least one of positive weight;
 *   - a step is named by at most one experiment (two would both decide it);
 *   - `variant` names a variant of that email step, and then every arm names one for that step
 *     (an arm without it would fall back to the step's own A/B hash and mix two experiments);
 *   - `send_hours` lie inside the sequence's window on every day it opens (a timing arm narrows the
 *     window, never widens it: no 3 a.m. send), and are for email, call and manual steps;
 *   - `order` lists top-level steps standing one after another in the sequence, no branch among
 *     them and not the first step (it opens the thread), and every arm with an order lists the same
 *     steps;
 *   - a step whose variant the experiment fixes has no `experiment:` settings of its own.
 */

const key = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'a key is 1-64 letters, digits, - or _');

const choiceSchema = z
  .object({
    variant: key.optional(),
    delay: z.unknown().optional(),
    send_hours: z.string().max(20).optional(),
  })
  .strict();

const armSchema = z
  .object({
    key,
    weight: z.number().int().min(0).max(1000).default(1),
    steps: z.record(key, choiceSchema).default({}),
    order: z.array(key).min(2).max(20).optional(),
  })
  .strict();

export const sequenceExperimentSchema = experimentSchema
  .extend({
    key,
    arms: z.array(armSchema).min(2, 'an experiment needs two arms or more').max(8),
  })
  .strict();

export type SequenceExperimentDocument = z.input<typeof sequenceExperimentSchema>;

export interface ArmChoiceDefinition {
  variant?: string;
  delay?: Delay;
  /** 'HH:MM-HH:MM' in the prospect's zone, on the days the sequence's window opens. */
  sendHours?: string;
}

export interface ExperimentArmDefinition {
  key: string;
  weight: number;
  /** By step key. */
  steps: Record<string, ArmChoiceDefinition>;
  order?: string[];
}

export interface ExperimentDefinition {
  key: string;
  settings: Partial<ExperimentSettings>;
  arms: ExperimentArmDefinition[];
}

/** What the checks need to know of the steps: each step's kind, variant keys, and whether it is top level, in file order. */
export interface StepFacts {
  key: string;
  kind: string;
  variants: string[];
  topLevel: boolean;
  /** The step has its own `experiment:` settings (a step's A/B test). */
  ownExperiment?: boolean;
}

const HOURS = /^(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})$/;

/** Minutes after midnight of 'HH:MM-HH:MM' (end may be 24:00), or a reason it is not one. */
export function parseSendHours(text: string): { start: number; end: number } | string {
  const m = HOURS.exec(text.trim());
  if (!m) return `'${text}' is not send hours: use e.g. "08:00-10:00"`;
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  if (Number(m[2]) > 59 || Number(m[4]) > 59 || start >= 1440 || end > 1440) return `'${text}' is not send hours: times run from 00:00 to 24:00`;
  if (end <= start) return `send hours '${text}' end before they start (hours across midnight are not allowed in an arm)`;
  return { start, end };
}

function hhmm(min: number): string {
  return `${String(Math.floor(min / 60)).padStart(2, '0')}:${String(min % 60).padStart(2, '0')}`;
}

/** The step's window for send hours: the sequence's days, these hours. */
export function armWindow(sendHours: string, seqWindow: SendWindow): SendWindow | undefined {
  const h = parseSendHours(sendHours);
  if (typeof h === 'string') return undefined;
  const days = seqWindow.kind === 'hours' ? seqWindow.days : ([1, 2, 3, 4, 5, 6, 7] as const);
  return { kind: 'hours', days: [...days], start: hhmm(h.start), end: hhmm(h.end) };
}

function minutes(t: string): number {
  const [h, m] = t.split(':').map(Number);
  return h! * 60 + m!;
}

/** Validates the file's experiments against the steps; problems are appended with their paths. */
export function checkExperiments(
  docs: ReadonlyArray<z.output<typeof sequenceExperimentSchema>>,
  steps: readonly StepFacts[],
  window: SendWindow,
  parseDelay: (input: unknown) => Delay,
  problems: string[],
): ExperimentDefinition[] {
  const byKey = new Map(steps.map((s) => [s.key, s]));
  const owner = new Map<string, string>();
  return docs.map((x, i) => {
    const at = `experiments.${i} (${x.key})`;
    if (docs.findIndex((y) => y.key === x.key) !== i) problems.push(`${at}: duplicate experiment key`);
    if (!x.arms.some((a) => a.weight > 0)) problems.push(`${at}: every arm has weight 0; at least one must take enrollments`);
    const named = new Set<string>();
    const orders: string[][] = [];
    const arms = x.arms.map((a, j): ExperimentArmDefinition => {
      const where = `${at}.arms.${j} (${a.key})`;
      if (x.arms.findIndex((b) => b.key === a.key) !== j) problems.push(`${where}: duplicate arm key`);
      const out: Record<string, ArmChoiceDefinition> = {};
      // In the sequence's order, whatever the file's: the stored form (jsonb orders keys its own way) exports the same text.
      const place = (k: string) => (byKey.has(k) ? steps.indexOf(byKey.get(k)!) : steps.length);
      for (const [stepKey, c] of Object.entries(a.steps).sort(([p], [q]) => place(p) - place(q))) {
        const w = `${where}.steps.${stepKey}`;
        const s = byKey.get(stepKey);
        named.add(stepKey);
        if (!s) {
          problems.push(`${w}: the sequence has no step '${stepKey}'`);
          continue;
        }
        const choice: ArmChoiceDefinition = {};
        if (c.variant !== undefined) {
          if (s.kind !== 'email') problems.push(`${w}.variant: only email steps have variants`);
          else if (!s.variants.includes(c.variant)) problems.push(`${w}.variant: step '${stepKey}' has no variant '${c.variant}' (it has ${s.variants.join(', ')})`);
          else if (s.ownExperiment && j === 0) problems.push(`${w}.variant: step '${stepKey}' has its own experiment settings, which would not apply: its variants are this experiment's arms (remove one or the other)`);
          choice.variant = c.variant;
        }
        if (c.delay !== undefined) {
          try {
            choice.delay = parseDelay(c.delay);
          } catch (e) {
            problems.push(`${w}.delay: ${(e as Error).message}`);
          }
        }
        if (c.send_hours !== undefined) {
          const h = parseSendHours(c.send_hours);
          if (typeof h === 'string') problems.push(`${w}.send_hours: ${h}`);
          else if (!['email', 'call', 'manual'].includes(s.kind)) problems.push(`${w}.send_hours: only email, call and manual steps have send hours`);
          else {
            const outside = outsideWindow(h, window);
            if (outside) problems.push(`${w}.send_hours: ${outside}`);
            choice.sendHours = `${hhmm(h.start)}-${hhmm(h.end)}`;
          }
        }
        if (Object.keys(choice).length === 0 && Object.keys(c).length === 0) problems.push(`${w}: choose a variant, delay or send_hours (or leave the step out)`);
        out[stepKey] = choice;
      }
      if (a.order) {
        orders.push(a.order);
        a.order.forEach((k) => named.add(k));
      }
      return { key: a.key, weight: a.weight, steps: out, ...(a.order ? { order: a.order } : {}) };
    });
    // A variant fixed by one arm is fixed by all: otherwise the others fall back to the step's own A/B.
    for (const stepKey of named) {
      const fixing = arms.filter((a) => a.steps[stepKey]?.variant !== undefined).length;
      if (fixing > 0 && fixing < arms.length) problems.push(`${at}: arms that choose a variant of '${stepKey}' must all choose one (${arms.length - fixing} do not)`);
    }
    if (orders.length) problems.push(...checkOrders(at, orders, steps));
    for (const k of named) {
      const o = owner.get(k);
      if (o !== undefined && o !== x.key) problems.push(`${at}: step '${k}' is already in experiment '${o}' (a step belongs to one experiment)`);
      owner.set(k, x.key);
    }
    return { key: x.key, settings: settingsFromDocument(x), arms };
  });
}

function outsideWindow(h: { start: number; end: number }, window: SendWindow): string | undefined {
  if (window.kind === 'any') return undefined;
  const start = minutes(window.start);
  const end = minutes(window.end);
  if (end <= start) return `the sequence's window crosses midnight (${window.start}-${window.end}); send hours need a window within one day`;
  if (h.start < start || h.end > end) return `${hhmm(h.start)}-${hhmm(h.end)} is outside the sequence's window ${window.start}-${window.end}: an arm may narrow the window, never widen it`;
  return undefined;
}

function checkOrders(at: string, orders: string[][], steps: readonly StepFacts[]): string[] {
  const out: string[] = [];
  const first = [...orders[0]!].sort();
  if (orders.some((o) => o.length !== first.length || [...o].sort().some((k, i) => k !== first[i]))) out.push(`${at}: every arm with an order lists the same steps`);
  for (const o of orders) {
    if (new Set(o).size !== o.length) out.push(`${at}: an order names a step twice`);
  }
  const top = steps.filter((s) => s.topLevel);
  const places = first.map((k) => top.findIndex((s) => s.key === k));
  for (const [i, k] of first.entries()) {
    const s = steps.find((x) => x.key === k);
    if (!s) out.push(`${at}.order: the sequence has no step '${k}'`);
    else if (!s.topLevel) out.push(`${at}.order: step '${k}' is inside a branch arm; only top-level steps can change places`);
    else if (s.kind === 'branch') out.push(`${at}.order: step '${k}' is a branch; a branch cannot change places`);
    else if (steps[0]?.key === k) out.push(`${at}.order: step '${k}' is the first step; it opens the thread and stays first`);
    else if (places[i]! < 0) out.push(`${at}.order: step '${k}' cannot be placed`);
  }
  const sorted = places.filter((p) => p >= 0).sort((a, b) => a - b);
  if (sorted.length === first.length && sorted.some((p, i) => i > 0 && p !== sorted[i - 1]! + 1)) out.push(`${at}.order: the steps ${first.join(', ')} must stand one after another in the sequence`);
  return out;
}

/**
 * Each arm's choices in the order of the steps (`stepKeys`, the file's order, arm steps after their
 * branch): the order validation gives them, restored after the store (jsonb keeps object keys in an
 * order of its own), so an exported file reads as the one applied.
 */
export function inStepOrder(defs: readonly ExperimentDefinition[], stepKeys: readonly string[]): ExperimentDefinition[] {
  const place = (k: string) => (stepKeys.includes(k) ? stepKeys.indexOf(k) : stepKeys.length);
  return defs.map((x) => ({ ...x, arms: x.arms.map((a) => ({ ...a, steps: Object.fromEntries(Object.entries(a.steps).sort(([p], [q]) => place(p) - place(q))) })) }));
}

/** The experiments as the file states them (delays written out), the inverse of checkExperiments. */
export function experimentsDocument(defs: readonly ExperimentDefinition[], formatDelay: (d: Delay) => string): SequenceExperimentDocument[] {
  return defs.map((x) => ({
    key: x.key,
    ...settingsToDocument(x.settings),
    arms: x.arms.map((a) => ({
      key: a.key,
      weight: a.weight,
      steps: Object.fromEntries(
        Object.entries(a.steps).map(([k, c]) => [
          k,
          { ...(c.variant !== undefined ? { variant: c.variant } : {}), ...(c.delay ? { delay: formatDelay(c.delay) } : {}), ...(c.sendHours ? { send_hours: c.sendHours } : {}) },
        ]),
      ),
      ...(a.order ? { order: a.order } : {}),
    })),
  }));
}

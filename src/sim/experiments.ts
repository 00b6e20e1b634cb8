import type { Random } from '../common/random.ts';
import { parseWindow } from '../calendar/index.ts';
import type { SequenceSettings } from '../sequence/sequence-repo.ts';
import type { RawDefinition, RawStep } from './world.ts';

/**
 * Sequence experiments in the simulation's random sequences (issue 18): arms that move a step's
 * send hours and delay, swap two steps, and fix the variant of every A/B step, so the run checks
 * that no arm can break a promise (a send twice, a send after a stop, a send outside the window).
 * Drawn from a forked stream, so the rest of a seed's world is what it was before.
 */

const delays = ['0 minutes', '2 hours', '1 day', '2 business days', '4 business days'] as const;

function minutes(t: string): number {
  const [h, m] = t.split(':').map(Number);
  return h! * 60 + m!;
}

function hhmm(min: number): string {
  return `${String(Math.floor(min / 60)).padStart(2, '0')}:${String(min % 60).padStart(2, '0')}`;
}

/** Send hours inside the window's hours, on a 15-minute grid; undefined when the window crosses midnight. */
function randomHours(r: Random, window: unknown): string | undefined {
  const w = parseWindow(window as Parameters<typeof parseWindow>[0]);
  const [start, end] = w.kind === 'any' ? [0, 1440] : [minutes(w.start), minutes(w.end)];
  if (end <= start) return undefined;
  const slots = (end - start) / 15;
  const a = r.int(0, slots - 1);
  const b = r.int(a + 1, slots);
  return `${hhmm(start + a * 15)}-${hhmm(start + b * 15)}`;
}

const plain = (s: RawStep) => s.type === 'email' || s.type === 'call' || s.type === 'manual';

/** An experiment for this definition, or none (about half the time, or when no step fits). */
export function randomExperiment(r0: Random, def: RawDefinition): RawDefinition {
  const r = r0.fork(`experiment:${def.key}`);
  if (r.next() < 0.5) return def;
  const top = def.steps;
  const timed = top.map((s, i) => [s, i] as const).filter(([s, i]) => i > 0 && plain(s));
  if (timed.length === 0) return def;
  const [target, at] = timed[r.int(0, timed.length - 1)]!;
  // Two adjacent steps after the first, neither the timed one nor a branch, may change places in one arm.
  const pairs = top.map((_, i) => i).filter((i) => i > 0 && i + 1 < top.length && plain(top[i]!) && plain(top[i + 1]!) && i !== at && i + 1 !== at);
  const swap = pairs.length && r.next() < 0.5 ? pairs[r.int(0, pairs.length - 1)]! : undefined;
  const ab = top.filter((s) => s.type === 'email' && Array.isArray(s.variants) && s !== target && (swap === undefined || (s !== top[swap] && s !== top[swap + 1])));
  const arms = Array.from({ length: r.int(2, 3) }, (_, j) => {
    const hours = randomHours(r, def.window);
    const steps: Record<string, Record<string, string>> = { [target.key]: { delay: delays[r.int(0, delays.length - 1)]!, ...(hours ? { send_hours: hours } : {}) } };
    for (const s of ab) steps[s.key] = { variant: j % 2 === 0 ? 'a' : 'b' };
    return { key: `arm${j}`, weight: r.int(1, 3), steps, ...(swap !== undefined && j === 1 ? { order: [top[swap + 1]!.key, top[swap]!.key] } : {}) };
  });
  return { ...def, experiments: [{ key: 'x', arms }] };
}

/**
 * After an edit: the experiment goes when a step it names is gone or moved into a place its arms
 * cannot have (an order's steps no longer side by side, or one of them now first), as a user would have to remove it. The
 * enrollments keep their stored arm; with no experiment of that key they run the sequence as written.
 */
export function pruneExperiments(def: RawDefinition): RawDefinition {
  if (!def.experiments?.length) return def;
  const keys = def.steps.map((s) => s.key);
  const ok = (def.experiments as Array<{ arms: Array<{ steps: Record<string, unknown>; order?: string[] }> }>).every((x) =>
    x.arms.every((a) => {
      if (!Object.keys(a.steps).every((k) => keys.includes(k))) return false;
      if (!a.order) return true;
      const places = a.order.map((k) => keys.indexOf(k)).sort((p, q) => p - q);
      // Two plain steps side by side, neither of them the first (it opens the thread and stays first).
      return places.every((p) => p > 0 && plain(def.steps[p]!)) && places[1]! === places[0]! + 1;
    }),
  );
  if (ok) return def;
  const { experiments: _gone, ...rest } = def;
  return rest;
}

/** The send hours the enrollment's arm sets on this step, if an experiment of the sequence has one. */
export function armHoursOf(settings: SequenceSettings, arms: Record<string, string>, stepKey: string | undefined): string | undefined {
  if (!stepKey) return undefined;
  for (const x of settings.experiments ?? []) {
    const hours = x.arms.find((a) => a.key === arms[x.key])?.steps[stepKey]?.sendHours;
    if (hours) return hours;
  }
  return undefined;
}

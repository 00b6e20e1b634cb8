import { z } from 'zod';
import type { CallOutcome } from './model.ts';

/**
 * The conditions a branch arm is chosen by (docs/sequences.md, "Branches and subsequences"). They
 * are plain data, written in the definition file and the API in the same snake_case shape, and
 * weighed by `holds` against facts the enrollment service gathers when the branch comes due: pure,
 * so the engine stays one state machine without I/O.
 */

export const callOutcomes = ['connected', 'no_answer', 'voicemail', 'busy', 'wrong_number', 'meeting_booked', 'not_interested'] as const satisfies readonly CallOutcome[];

/** The lead's own fields a condition may name; any other name is a custom field (`lead.custom`). */
export const leadFields = ['email', 'first_name', 'last_name', 'company', 'title', 'phone', 'country', 'region', 'time_zone'] as const;

const stepKey = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'a key is 1-64 letters, digits, - or _');

export type Condition =
  | { opened: string }
  | { clicked: string }
  | { call_outcome: { step: string; in: CallOutcome[] } }
  | { lead: { field: string; equals?: string; in?: string[]; contains?: string; exists?: boolean } }
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition };

/** How deep all/any/not may nest: a condition is something a person reads in a flow editor. */
export const MAX_CONDITION_DEPTH = 4;

const leaf = z.union([
  z.object({ opened: stepKey }).strict(),
  z.object({ clicked: stepKey }).strict(),
  z.object({ call_outcome: z.object({ step: stepKey, in: z.array(z.enum(callOutcomes)).min(1).max(callOutcomes.length) }).strict() }).strict(),
  z
    .object({
      lead: z
        .object({
          field: z.string().min(1).max(100),
          equals: z.string().max(1000).optional(),
          in: z.array(z.string().max(1000)).min(1).max(100).optional(),
          contains: z.string().min(1).max(1000).optional(),
          exists: z.boolean().optional(),
        })
        .strict()
        .refine((l) => [l.equals, l.in, l.contains, l.exists].filter((x) => x !== undefined).length === 1, 'a lead condition takes exactly one of equals, in, contains, exists'),
    })
    .strict(),
]);

// One recursive schema (named, so the web types have one `BranchCondition`), its depth checked apart.
const recursive: z.ZodType<Condition> = z.lazy(() =>
  z.union([
    leaf,
    z.object({ all: z.array(recursive).min(1).max(20) }).strict(),
    z.object({ any: z.array(recursive).min(1).max(20) }).strict(),
    z.object({ not: recursive }).strict(),
  ]),
  // Named too: the cycle is through this schema, and a cycle through an unnamed one is written as a
  // $ref the OpenAPI document cannot resolve.
).meta({ id: 'BranchConditionPart' }) as z.ZodType<Condition>;

export const conditionSchema: z.ZodType<Condition> = recursive
  .refine((c) => depth(c) <= MAX_CONDITION_DEPTH, `all/any/not nest at most ${MAX_CONDITION_DEPTH} deep`)
  .meta({ id: 'BranchCondition' }) as z.ZodType<Condition>;

function depth(c: Condition): number {
  if ('all' in c) return 1 + Math.max(...c.all.map(depth));
  if ('any' in c) return 1 + Math.max(...c.any.map(depth));
  if ('not' in c) return 1 + depth(c.not);
  return 0;
}

/**
 * What the enrollment service knows when a branch comes due, by step id: emails a person opened
 * (automatic and image-proxy opens are left out), emails clicked, the last outcome of each call
 * step, and the lead's fields (built-in by their column names, custom by their own).
 */
export interface BranchFacts {
  openedByPerson: string[];
  clicked: string[];
  callOutcomes: Record<string, CallOutcome>;
  lead: Record<string, string | null>;
}

export const noFacts: BranchFacts = { openedByPerson: [], clicked: [], callOutcomes: {}, lead: {} };

/** Whether `c` holds; `idOf` turns a step key of the condition into the step id facts are kept by. */
export function holds(c: Condition, f: BranchFacts, idOf: (key: string) => string | undefined): boolean {
  if ('opened' in c) return has(f.openedByPerson, idOf(c.opened));
  if ('clicked' in c) return has(f.clicked, idOf(c.clicked));
  if ('call_outcome' in c) {
    const id = idOf(c.call_outcome.step);
    const o = id === undefined ? undefined : f.callOutcomes[id];
    return o !== undefined && c.call_outcome.in.includes(o);
  }
  if ('lead' in c) {
    const l = c.lead;
    const raw = f.lead[l.field];
    const v = raw === undefined || raw === null || raw.trim() === '' ? null : raw;
    if (l.exists !== undefined) return (v !== null) === l.exists;
    if (v === null) return false;
    // Field values are compared as a person reads them: case and surrounding space do not count.
    const norm = v.trim().toLowerCase();
    if (l.equals !== undefined) return norm === l.equals.trim().toLowerCase();
    if (l.in !== undefined) return l.in.some((x) => norm === x.trim().toLowerCase());
    if (l.contains !== undefined) return norm.includes(l.contains.trim().toLowerCase());
    return false;
  }
  if ('all' in c) return c.all.every((x) => holds(x, f, idOf));
  if ('any' in c) return c.any.some((x) => holds(x, f, idOf));
  return !holds(c.not, f, idOf);
}

function has(list: string[], id: string | undefined): boolean {
  return id !== undefined && list.includes(id);
}

/** Every step a condition refers to, with what it asks of it ('email' for opened/clicked, 'call' for call_outcome). */
export function stepRefs(c: Condition): Array<{ key: string; needs: 'email' | 'call' }> {
  if ('opened' in c) return [{ key: c.opened, needs: 'email' }];
  if ('clicked' in c) return [{ key: c.clicked, needs: 'email' }];
  if ('call_outcome' in c) return [{ key: c.call_outcome.step, needs: 'call' }];
  if ('lead' in c) return [];
  if ('all' in c) return c.all.flatMap(stepRefs);
  if ('any' in c) return c.any.flatMap(stepRefs);
  return stepRefs(c.not);
}

/** Whether a condition asks for the facts of the tracking or task tables (the lead row is always read). */
export function needsActivity(c: Condition): boolean {
  return stepRefs(c).length > 0;
}

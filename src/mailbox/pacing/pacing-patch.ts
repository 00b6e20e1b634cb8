/**
 * Every pacing setting as one set that a person changes, the same for a workspace (defaults for
 * its mailboxes) and for a mailbox (overrides): the caps (daily, hourly, ramp) and the working
 * day and gap settings of settings.ts. The API (PATCH …/pacing), the CLI (`mailbox set`,
 * `workspace pacing`) and the web forms all go through `patchPacing`, so one schema and one set
 * of messages validate them. Pure: the store side is pacing-settings.ts.
 *
 * A field left out is unchanged; a field named in `reset` goes back to inheriting (the
 * workspace's default for a mailbox, the built-in default for a workspace).
 */
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { parseRamp, type Ramp } from './ramp.ts';
import { pacingOverridesSchema, resolvePacingSettings, type PacingOverrides, type PacingSettings } from './settings.ts';

/** The built-in daily cap of a mailbox that sets none and whose workspace sets none. */
export const DEFAULT_DAILY_CAP = 30;

export interface MailboxCaps {
  dailyCap: number;
  /** Sends per clock hour, a hard ceiling over the day's drawn hourlyCeiling; null: none. */
  hourlyCap: number | null;
  ramp: Ramp | null;
}

/** What a workspace or a mailbox sets of the caps; absent: inherited. */
export interface CapOverrides {
  dailyCap?: number;
  hourlyCap?: number;
  /** null: explicitly no ramp. */
  ramp?: Ramp | null;
}

const rampSchema = z.strictObject({
  start: z.number().int().min(1, 'ramp.start: a ramp starts at 1 or more a day').max(10_000),
  step: z.number().int().min(0).max(10_000),
  target: z.number().int().min(1).max(10_000).optional(),
});

const capFields = {
  dailyCap: z.number().int('dailyCap: a whole number of emails a day').min(1, 'dailyCap: at least 1 a day').max(10_000),
  hourlyCap: z.number().int().min(1, 'hourlyCap: at least 1 an hour').max(1000),
  ramp: rampSchema.nullable().describe('{start, step, target?}: start a day, plus step each day, up to target (or the daily cap); null: no ramp'),
};

export const pacingKeys = ['dailyCap', 'hourlyCap', 'ramp', ...(Object.keys(pacingOverridesSchema.shape) as Array<keyof PacingOverrides>)] as const;
export type PacingKey = (typeof pacingKeys)[number];

export const pacingPatchSchema = pacingOverridesSchema
  .extend({
    dailyCap: capFields.dailyCap.optional(),
    hourlyCap: capFields.hourlyCap.optional(),
    ramp: capFields.ramp.optional(),
    reset: z.array(z.enum(pacingKeys)).max(pacingKeys.length).optional().describe('Settings to clear, so that they are inherited again'),
  })
  .strict();
export type PacingPatch = z.infer<typeof pacingPatchSchema>;

/** What one level (workspace or mailbox) sets: its caps and its settings.pacing. */
export interface PacingLevel {
  caps: CapOverrides;
  pacing: PacingOverrides;
}

/** The settings in force, and for each one where it comes from. */
export type EffectivePacing = MailboxCaps & PacingSettings;

/** Caps of a level, from the store's values (mailbox columns, or workspace settings.mailboxCaps). */
export function capsOf(raw: { dailyCap?: unknown; hourlyCap?: unknown; ramp?: unknown }, where: string): CapOverrides {
  const caps: CapOverrides = {};
  if (typeof raw.dailyCap === 'number') caps.dailyCap = raw.dailyCap;
  if (typeof raw.hourlyCap === 'number') caps.hourlyCap = raw.hourlyCap;
  if (raw.ramp !== undefined && raw.ramp !== null) caps.ramp = parseRamp(raw.ramp, `${where} ramp`);
  return caps;
}

/** The caps in force: the mailbox's own, else the workspace's, else the built-in ones. */
export function resolveCaps(workspace: CapOverrides, mailbox: CapOverrides): MailboxCaps {
  return {
    dailyCap: mailbox.dailyCap ?? workspace.dailyCap ?? DEFAULT_DAILY_CAP,
    hourlyCap: mailbox.hourlyCap ?? workspace.hourlyCap ?? null,
    ramp: mailbox.ramp !== undefined ? mailbox.ramp : (workspace.ramp ?? null),
  };
}

/** Reads a patch (API body or CLI flags); every problem in plain words, with its field. */
export function parsePacingPatch(input: unknown): PacingPatch {
  const r = pacingPatchSchema.safeParse(input);
  if (!r.success) {
    const problems = r.error.issues.map((i) => {
      const field = i.path.join('.') || '(root)';
      return i.message.startsWith(`${String(i.path[0])}`) ? i.message : `${field}: ${i.message}`;
    });
    throw cadenzaError('INVALID_INPUT', `invalid pacing settings: ${problems.join('; ')}`, { field: 'pacing', problems });
  }
  return r.data;
}

/**
 * A level after a patch. `parent` is what the level inherits (the workspace's level for a
 * mailbox; nothing for a workspace): the merged result is checked as a whole, so a day too short
 * for its jitter is refused when it is set, not at the first send.
 */
export function applyPacingPatch(current: PacingLevel, patch: PacingPatch, parent: PacingLevel | null, where: string): PacingLevel {
  const caps: CapOverrides = { ...current.caps };
  const pacing: Record<string, unknown> = { ...current.pacing };
  for (const k of patch.reset ?? []) {
    if (k === 'dailyCap' || k === 'hourlyCap' || k === 'ramp') delete caps[k];
    else delete pacing[k];
  }
  const { reset: _reset, dailyCap, hourlyCap, ramp, ...settings } = patch;
  if (dailyCap !== undefined) caps.dailyCap = dailyCap;
  if (hourlyCap !== undefined) caps.hourlyCap = hourlyCap;
  if (ramp !== undefined) caps.ramp = ramp === null ? null : { start: ramp.start, step: ramp.step, ...(ramp.target !== undefined ? { target: ramp.target } : {}) };
  for (const [k, v] of Object.entries(settings)) if (v !== undefined) pacing[k] = v;
  const next: PacingLevel = { caps, pacing: pacing as PacingOverrides };
  effectivePacing(parent, next, where);
  return next;
}

/** The settings in force for a level under its parent (throws INVALID_INPUT naming `where`). */
export function effectivePacing(parent: PacingLevel | null, level: PacingLevel, where: string): EffectivePacing {
  const settings = parent ? resolvePacingSettings(parent.pacing, level.pacing, where) : resolvePacingSettings(level.pacing, undefined, where);
  return { ...resolveCaps(parent?.caps ?? {}, level.caps), ...settings };
}

import { readFileSync } from 'node:fs';
import { experimentSchema, fromDocument as experimentFromDocument, type ExperimentSettings } from '../experiments/settings.ts';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { cadenzaError } from '../common/errors.ts';
import { parseWindow, type Delay, type SendWindow } from '../calendar/index.ts';
import { templateProblems } from './template/validate.ts';
import { retryableCallOutcomes, type CallRetry } from './model.ts';

/**
 * The file a user writes to create or update a sequence (`cadenza sequence apply FILE`, YAML or
 * JSON). Each step carries a `key` that is its identity for life: renaming a key is removing a
 * step and adding another, so keys are what make edits to a running sequence safe.
 */

const delayPattern = /^\s*(\d+)\s*(minutes?|mins?|m|hours?|h|days?|d|business[ _-]?days?|bd)\s*$/i;

/**
 * The longest wait a step may have, per unit: ten years. Past it no due time is meaningful, and
 * `99999999999999999999 days` would overflow the date arithmetic (an Invalid Date, a 500).
 */
export const MAX_DELAY: Record<Delay['unit'], number> = { minutes: 10 * 366 * 24 * 60, hours: 10 * 366 * 24, days: 10 * 366, business_days: 10 * 262 };

export function parseDelay(input: unknown): Delay {
  return withinRange(parseDelayShape(input), input);
}

function withinRange(d: Delay, input: unknown): Delay {
  if (!Number.isSafeInteger(d.amount) || d.amount < 0 || d.amount > MAX_DELAY[d.unit]) {
    throw cadenzaError('INVALID_INPUT', `invalid delay ${JSON.stringify(input)}: at most ${MAX_DELAY[d.unit]} ${d.unit.replace('_', ' ')} (ten years)`, { input, max: MAX_DELAY[d.unit] });
  }
  return d;
}

function parseDelayShape(input: unknown): Delay {
  if (typeof input === 'number') return { amount: input, unit: 'days' };
  if (typeof input === 'object' && input !== null) {
    const o = input as { amount?: unknown; unit?: unknown };
    const unit = typeof o.unit === 'string' ? normaliseUnit(o.unit) : undefined;
    if (typeof o.amount === 'number' && Number.isInteger(o.amount) && o.amount >= 0 && unit) return { amount: o.amount, unit };
  }
  if (typeof input === 'string') {
    const m = delayPattern.exec(input);
    if (m) return { amount: Number(m[1]), unit: normaliseUnit(m[2]!)! };
  }
  throw cadenzaError('INVALID_INPUT', `invalid delay ${JSON.stringify(input)}: use e.g. "30 minutes", "4 hours", "3 days", "2 business days"`, { input });
}

function normaliseUnit(u: string): Delay['unit'] | undefined {
  const t = u.toLowerCase().replace(/[ _-]/g, '');
  if (/^(minutes?|mins?|m)$/.test(t)) return 'minutes';
  if (/^(hours?|h)$/.test(t)) return 'hours';
  if (/^(days?|d)$/.test(t)) return 'days';
  if (/^(businessdays?|bd)$/.test(t)) return 'business_days';
  return undefined;
}

const key = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'a key is 1-64 letters, digits, - or _');

const variantSchema = z.object({
  key,
  subject: z.string().max(998).optional(),
  body: z.string().min(1).max(100_000),
  weight: z.number().int().min(0).max(1000).default(1),
});

export const stepSchema = z
  .object({
    key,
    type: z.enum(['email', 'call', 'manual', 'wait']),
    delay: z.unknown().default('0 minutes'),
    subject: z.string().max(998).optional(),
    body: z.string().max(100_000).optional(),
    variants: z.array(variantSchema).optional(),
    title: z.string().max(500).optional(),
    notes: z.string().max(10_000).optional(),
    wait_for_task: z.boolean().optional(),
    /** Email steps with variants: the A/B experiment's settings (experiments/settings.ts). */
    experiment: experimentSchema.optional(),
    /** Call steps: try the call again after these outcomes (default: no answer, voicemail, busy). */
    retry: z
      .object({
        attempts: z.number().int().min(1).max(10),
        after: z.unknown().default('1 business day'),
        on: z.array(z.enum(retryableCallOutcomes as [string, ...string[]])).min(1).default([...retryableCallOutcomes]),
      })
      .strict()
      .optional(),
  })
  .strict();

export const stopRulesSchema = z
  .object({
    on_out_of_office: z.enum(['pause', 'ignore']).optional(),
    ooo_default_pause_days: z.number().int().min(1).max(90).optional(),
    on_meeting_booked: z.enum(['finish', 'continue']).optional(),
    max_soft_bounces: z.number().int().min(1).max(20).optional(),
    /** A reply stops the other live enrollments of the same company (email domain; free-mail domains excluded). */
    stop_company_on_reply: z.boolean().optional(),
  })
  .strict();

/** The definition file's schema; the API's sequence body is derived from it (api/routes/sequence-body.ts). */
export const definitionSchema = z
  .object({
    key,
    name: z.string().min(1).max(200),
    status: z.enum(['draft', 'active', 'paused', 'archived']).default('active'),
    window: z.unknown().default('Mon-Fri 09:00-17:00'),
    holidays: z.boolean().default(true),
    jitter_minutes: z.number().int().min(0).max(240).default(45),
    // Off unless asked: a pixel and redirected links cost deliverability and reader trust.
    track_opens: z.boolean().default(false),
    track_clicks: z.boolean().default(false),
    stop_rules: stopRulesSchema.default({}),
    mailboxes: z.array(z.string().email()).default([]),
    steps: z.array(stepSchema).min(1).max(50),
  })
  .strict();

/** A definition as a file states it (before defaults and normalisation). */
export type DefinitionDocument = z.input<typeof definitionSchema>;

export interface StepDefinition {
  key: string;
  kind: 'email' | 'call' | 'manual' | 'wait';
  delay: Delay;
  variants: Array<{ key: string; subject: string | null; body: string; weight: number }>;
  config: { title?: string; notes?: string; waitForTask?: boolean; retry?: CallRetry; experiment?: Partial<ExperimentSettings> };
}

export interface SequenceDefinition {
  key: string;
  name: string;
  status: 'draft' | 'active' | 'paused' | 'archived';
  window: SendWindow;
  skipHolidays: boolean;
  jitterMinutes: number;
  tracking: { opens: boolean; clicks: boolean };
  stopRules: { onOutOfOffice?: 'pause' | 'ignore'; oooDefaultPauseDays?: number; onMeetingBooked?: 'finish' | 'continue'; maxSoftBounces?: number; stopCompanyOnReply?: boolean };
  mailboxes: string[];
  steps: StepDefinition[];
}

/** An empty or blank subject is no subject (a follow-up in the thread): the same in a file and in the editor. */
function subjectOf(s: string | undefined): string | null {
  return s !== undefined && s.trim() !== '' ? s : null;
}

/** Validates a parsed definition; every problem is reported at once, with its path. */
export function validateDefinition(input: unknown): SequenceDefinition {
  const r = definitionSchema.safeParse(input);
  if (!r.success) {
    const problems = r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw cadenzaError('INVALID_INPUT', `invalid sequence definition:\n  ${problems.join('\n  ')}`, { problems });
  }
  const d = r.data;
  const problems: string[] = [];
  const seen = new Set<string>();
  const steps: StepDefinition[] = [];
  d.steps.forEach((s, i) => {
    const where = `steps.${i} (${s.key})`;
    if (seen.has(s.key)) problems.push(`${where}: duplicate step key`);
    seen.add(s.key);
    let delay: Delay = { amount: 0, unit: 'minutes' };
    try {
      delay = parseDelay(s.delay);
    } catch (e) {
      problems.push(`${where}.delay: ${(e as Error).message}`);
    }
    let variants: StepDefinition['variants'] = [];
    if (s.type === 'email') {
      if (s.variants?.length) {
        if (s.body !== undefined) problems.push(`${where}: give either body or variants, not both`);
        variants = s.variants.map((v) => ({ key: v.key, subject: subjectOf(v.subject), body: v.body, weight: v.weight }));
        if (new Set(variants.map((v) => v.key)).size !== variants.length) problems.push(`${where}: duplicate variant key`);
      } else if (!s.body) {
        problems.push(`${where}: an email step needs a body (or variants)`);
      } else {
        variants = [{ key: 'a', subject: subjectOf(s.subject), body: s.body, weight: 1 }];
      }
      if (i === 0 && variants.some((v) => !v.subject)) problems.push(`${where}: the first email needs a subject`);
      // Template syntax and unknown variables are caught here, at apply time, not at send time.
      variants.forEach((v, j) => problems.push(...templateProblems({ subject: v.subject, text: v.body }, s.variants?.length ? `${where}.variants.${j} (${v.key})` : where)));
    } else if (s.body !== undefined || s.variants !== undefined || s.subject !== undefined) {
      problems.push(`${where}: only email steps have a subject, body or variants`);
    }
    if (s.experiment && s.type !== 'email') problems.push(`${where}: only email steps have an experiment`);
    let retry: CallRetry | undefined;
    if (s.retry) {
      if (s.type !== 'call') problems.push(`${where}: only call steps have a retry rule`);
      try {
        retry = { attempts: s.retry.attempts, after: parseDelay(s.retry.after), on: [...new Set(s.retry.on)] as CallRetry['on'] };
      } catch (e) {
        problems.push(`${where}.retry.after: ${(e as Error).message}`);
      }
    }
    steps.push({
      key: s.key,
      kind: s.type,
      delay,
      variants,
      config: {
        // An empty title or note is none (the task then takes its default title), as for subjects.
        ...(s.title?.trim() ? { title: s.title } : {}),
        ...(s.notes?.trim() ? { notes: s.notes } : {}),
        ...(s.wait_for_task !== undefined ? { waitForTask: s.wait_for_task } : {}),
        ...(retry ? { retry } : {}),
        ...(s.experiment ? { experiment: experimentFromDocument(s.experiment) } : {}),
      },
    });
  });
  let window: SendWindow = { kind: 'any' };
  try {
    window = parseWindow(d.window as Parameters<typeof parseWindow>[0]);
  } catch (e) {
    problems.push(`window: ${(e as Error).message}`);
  }
  if (problems.length) throw cadenzaError('INVALID_INPUT', `invalid sequence definition:\n  ${problems.join('\n  ')}`, { problems });
  const sr = d.stop_rules;
  return {
    key: d.key,
    name: d.name,
    status: d.status,
    window,
    skipHolidays: d.holidays,
    jitterMinutes: d.jitter_minutes,
    tracking: { opens: d.track_opens, clicks: d.track_clicks },
    stopRules: {
      ...(sr.on_out_of_office ? { onOutOfOffice: sr.on_out_of_office } : {}),
      ...(sr.ooo_default_pause_days ? { oooDefaultPauseDays: sr.ooo_default_pause_days } : {}),
      ...(sr.on_meeting_booked ? { onMeetingBooked: sr.on_meeting_booked } : {}),
      ...(sr.max_soft_bounces ? { maxSoftBounces: sr.max_soft_bounces } : {}),
      ...(sr.stop_company_on_reply !== undefined ? { stopCompanyOnReply: sr.stop_company_on_reply } : {}),
    },
    mailboxes: d.mailboxes.map((m) => m.toLowerCase()),
    steps,
  };
}

/** Reads a YAML or JSON definition file (YAML is a superset of JSON, so one parser reads both). */
export function readDefinitionFile(path: string): SequenceDefinition {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw cadenzaError('INVALID_INPUT', `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { path });
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (e) {
    throw cadenzaError('INVALID_INPUT', `${path} is not valid YAML or JSON: ${(e as Error).message}`, { path });
  }
  return validateDefinition(data);
}

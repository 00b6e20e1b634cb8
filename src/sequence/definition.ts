import { readFileSync } from 'node:fs';
import { experimentSchema, fromDocument as experimentFromDocument, type ExperimentSettings } from '../experiments/settings.ts';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { cadenzaError } from '../common/errors.ts';
import { htmlToText, MAX_EMAIL_HTML, sanitizeEmailHtml } from '../common/email-html.ts';
import { parseWindow, type Delay, type SendWindow } from '../calendar/index.ts';
import { templateProblems } from './template/validate.ts';
import { replyRuleIntents, retryableCallOutcomes, type ArmThen, type CallRetry, type ReplyRule, type ReplyRuleIntent } from './model.ts';
import { conditionSchema, stepRefs, type Condition } from './conditions.ts';
import { checkExperiments, sequenceExperimentSchema, type ExperimentDefinition } from './definition-experiments.ts';

/**
 * The file a user writes to create or update a sequence (`cadenza sequence apply FILE`, YAML or
 * JSON). Each step carries a `key` that is its identity for life: renaming a key is removing a
 * step and adding another, so keys are what make edits to a running sequence safe.
 */

const delayPattern = /^\s*(\d+)\s*(minutes?|mins?|m|hours?|h|days?|d|business[ _-]?days?|bd|weeks?|w)\s*$/i;

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
    // A week is read as 7 days (the calendar counts days); it is written back as days.
    if (m && /^w/i.test(m[2]!)) return { amount: Number(m[1]) * 7, unit: 'days' };
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
  /** The text/plain part; with `html` and left out, made from the HTML (common/email-html.ts). */
  body: z.string().max(100_000).optional(),
  /** The email editor's rich text: sanitized on validation, sent as multipart/alternative with the body. */
  html: z.string().max(MAX_EMAIL_HTML).optional(),
  weight: z.number().int().min(0).max(1000).default(1),
});

/** A step as it stands inside a branch arm: any step but a branch (branches are one level deep). */
export const armStepSchema = z
  .object({
    key,
    type: z.enum(['email', 'call', 'manual', 'wait'], 'a step in a branch arm is an email, call, manual or wait step (no branch inside a branch)'),
    delay: z.unknown().default('0 minutes'),
    subject: z.string().max(998).optional(),
    body: z.string().max(100_000).optional(),
    html: z.string().max(MAX_EMAIL_HTML).optional(),
    variants: z.array(variantSchema).optional(),
    title: z.string().max(500).optional(),
    notes: z.string().max(10_000).optional(),
    wait_for_task: z.boolean().optional(),
    /** Email steps: false sends the step without a signature; left out or true: the sending mailbox's signature (mailbox/signature.ts). */
    signature: z.boolean().optional(),
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

/** A subsequence: the lead moves to the workspace's sequence `move_to`, its first step due no earlier than `after`. */
export const moveToSchema = z.object({ move_to: key, after: z.unknown().default('0 days') }).strict();

export const armSchema = z
  .object({
    key,
    /** No `when`: the default arm (at most one, last). */
    when: conditionSchema.optional(),
    steps: z.array(armStepSchema).max(20).default([]),
    then: z.union([z.enum(['continue', 'end']), moveToSchema]).default('continue'),
  })
  .strict();

export const stepSchema = armStepSchema
  .extend({
    type: z.enum(['email', 'call', 'manual', 'wait', 'branch']),
    /** Branch steps: the arms, weighed in order when the branch comes due. */
    branches: z.array(armSchema).min(1).max(8).optional(),
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
    /** By reply intent (ingest's labels): `notify` (a task for the owner) or a move to another sequence. */
    on_reply: z.partialRecord(z.enum(replyRuleIntents), z.union([z.literal('notify'), moveToSchema])).optional(),
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
    /** Experiments that span steps or vary timing (definition-experiments.ts). */
    experiments: z.array(sequenceExperimentSchema).max(10).optional(),
  })
  .strict();

/** A definition as a file states it (before defaults and normalisation). */
export type DefinitionDocument = z.input<typeof definitionSchema>;

export interface StepDefinition {
  key: string;
  kind: 'email' | 'call' | 'manual' | 'wait' | 'branch';
  delay: Delay;
  variants: Array<{ key: string; subject: string | null; body: string; html: string | null; weight: number }>;
  /** `signature: false`: sent without the mailbox's signature (only stored when false: true is the default). */
  config: { title?: string; notes?: string; waitForTask?: boolean; signature?: false; retry?: CallRetry; experiment?: Partial<ExperimentSettings> };
  /** Branch steps: the arms, each with its own steps (never branches). */
  branches?: ArmDefinition[];
}

export interface ArmDefinition {
  key: string;
  when?: Condition;
  then: ArmThen;
  steps: StepDefinition[];
}

export interface SequenceDefinition {
  key: string;
  name: string;
  status: 'draft' | 'active' | 'paused' | 'archived';
  window: SendWindow;
  skipHolidays: boolean;
  jitterMinutes: number;
  tracking: { opens: boolean; clicks: boolean };
  stopRules: {
    onOutOfOffice?: 'pause' | 'ignore';
    oooDefaultPauseDays?: number;
    onMeetingBooked?: 'finish' | 'continue';
    maxSoftBounces?: number;
    stopCompanyOnReply?: boolean;
    onReply?: Partial<Record<ReplyRuleIntent, ReplyRule>>;
  };
  mailboxes: string[];
  steps: StepDefinition[];
  /** Present when the file declares any (definition-experiments.ts). */
  experiments?: ExperimentDefinition[];
}

/** An empty or blank subject is no subject (a follow-up in the thread): the same in a file and in the editor. */
/**
 * An email's two parts as stored: the HTML sanitized by the allow-list (whatever the client sent),
 * the text as written or, when left out, made from the HTML.
 */
function emailParts(v: { body?: string | undefined; html?: string | undefined }): { body: string; html: string | null } {
  const html = v.html !== undefined && v.html.trim() !== '' ? sanitizeEmailHtml(v.html) : null;
  const body = v.body !== undefined && v.body.trim() !== '' ? v.body : html !== null ? htmlToText(html) : (v.body ?? '');
  return { body, html: html === '' ? null : html };
}

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
  // Steps declared so far, in file order, with their kind: a condition may name only these.
  const before = new Map<string, StepDefinition['kind']>();
  const steps: StepDefinition[] = [];
  d.steps.forEach((s, i) => {
    const where = `steps.${i} (${s.key})`;
    const step = checkStep(s, where, seen, problems);
    if (s.type === 'branch') {
      if (!s.branches?.length) problems.push(`${where}: a branch step needs branches`);
      step.branches = (s.branches ?? []).map((a, j) => {
        const at = `${where}.branches.${j} (${a.key})`;
        if (s.branches!.findIndex((b) => b.key === a.key) !== j) problems.push(`${at}: duplicate arm key`);
        if (!a.when && j !== s.branches!.length - 1) problems.push(`${at}: the arm without \`when\` (the default) must be the last`);
        if (a.when) {
          for (const ref of stepRefs(a.when)) {
            const kind = before.get(ref.key);
            if (kind === undefined) problems.push(`${at}.when: no ${ref.needs} step '${ref.key}' before this branch`);
            else if (kind !== ref.needs) problems.push(`${at}.when: step '${ref.key}' is a ${kind} step; ${ref.needs === 'email' ? 'opened and clicked name an email step' : 'call_outcome names a call step'}`);
          }
        }
        let then: ArmThen = 'continue';
        if (typeof a.then === 'string') then = a.then;
        else {
          try {
            then = { moveTo: a.then.move_to, after: parseDelay(a.then.after) };
          } catch (e) {
            problems.push(`${at}.then.after: ${(e as Error).message}`);
          }
          if (a.then.move_to === d.key) problems.push(`${at}.then.move_to: a branch cannot move the lead to the same sequence`);
        }
        const armSteps = a.steps.map((x, k) => checkStep(x, `${at}.steps.${k} (${x.key})`, seen, problems));
        return { key: a.key, ...(a.when ? { when: a.when } : {}), then, steps: armSteps };
      });
      for (const a of step.branches) for (const x of a.steps) before.set(x.key, x.kind);
    } else if (s.branches !== undefined) {
      problems.push(`${where}: only branch steps have branches`);
    }
    before.set(s.key, s.type);
    steps.push(step);
  });
  const onReply: NonNullable<SequenceDefinition['stopRules']['onReply']> = {};
  for (const [intent, rule] of Object.entries(d.stop_rules.on_reply ?? {})) {
    if (rule === undefined) continue;
    if (rule === 'notify') onReply[intent as ReplyRuleIntent] = 'notify';
    else {
      try {
        onReply[intent as ReplyRuleIntent] = { moveTo: rule.move_to, after: parseDelay(rule.after) };
      } catch (e) {
        problems.push(`stop_rules.on_reply.${intent}.after: ${(e as Error).message}`);
      }
      if (rule.move_to === d.key) problems.push(`stop_rules.on_reply.${intent}.move_to: a reply cannot move the lead to the same sequence`);
    }
  }
  let window: SendWindow = { kind: 'any' };
  try {
    window = parseWindow(d.window as Parameters<typeof parseWindow>[0]);
  } catch (e) {
    problems.push(`window: ${(e as Error).message}`);
  }
  const facts = steps.flatMap((s) => [
    { key: s.key, kind: s.kind, variants: s.variants.map((v) => v.key), topLevel: true, ownExperiment: s.config.experiment !== undefined },
    ...(s.branches ?? []).flatMap((a) => a.steps.map((x) => ({ key: x.key, kind: x.kind, variants: x.variants.map((v) => v.key), topLevel: false, ownExperiment: x.config.experiment !== undefined }))),
  ]);
  const experiments = checkExperiments(d.experiments ?? [], facts, window, parseDelay, problems);
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
      ...(sr.on_reply !== undefined ? { onReply } : {}),
    },
    mailboxes: d.mailboxes.map((m) => m.toLowerCase()),
    steps,
    ...(experiments.length ? { experiments } : {}),
  };
}

type StepInput = z.output<typeof armStepSchema> | z.output<typeof stepSchema>;

/** Checks one step (top level or in an arm) and returns it without its arms; problems are appended. */
function checkStep(s: StepInput, where: string, seen: Set<string>, problems: string[]): StepDefinition {
  // Keys are unique across the whole sequence, arm steps included: a key is a step's identity.
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
      if (s.body !== undefined || s.html !== undefined) problems.push(`${where}: give either body or variants, not both`);
      variants = s.variants.map((v) => ({ key: v.key, subject: subjectOf(v.subject), ...emailParts(v), weight: v.weight }));
      if (new Set(variants.map((v) => v.key)).size !== variants.length) problems.push(`${where}: duplicate variant key`);
      variants.forEach((v, j) => v.body.trim() === '' && problems.push(`${where}.variants.${j} (${v.key}): a variant needs a body (or html)`));
    } else if (!s.body && !s.html) {
      problems.push(`${where}: an email step needs a body (or variants)`);
    } else {
      variants = [{ key: 'a', subject: subjectOf(s.subject), ...emailParts(s), weight: 1 }];
      if (variants[0]!.body.trim() === '') problems.push(`${where}: an email step needs a body (its html has no text)`);
    }
    // Template syntax and unknown variables are caught here, at apply time, not at send time.
    variants.forEach((v, j) => problems.push(...templateProblems({ subject: v.subject, text: v.body, html: v.html }, s.variants?.length ? `${where}.variants.${j} (${v.key})` : where)));
  } else if (s.body !== undefined || s.html !== undefined || s.variants !== undefined || s.subject !== undefined) {
    problems.push(`${where}: only email steps have a subject, body, html or variants`);
  }
  if (s.type === 'branch' && (s.title !== undefined || s.notes !== undefined || s.wait_for_task !== undefined)) problems.push(`${where}: a branch step has no title, notes or wait_for_task`);
  if (s.experiment && s.type !== 'email') problems.push(`${where}: only email steps have an experiment`);
  if (s.signature !== undefined && s.type !== 'email') problems.push(`${where}: only email steps have a signature`);
  let retry: CallRetry | undefined;
  if (s.retry) {
    if (s.type !== 'call') problems.push(`${where}: only call steps have a retry rule`);
    try {
      retry = { attempts: s.retry.attempts, after: parseDelay(s.retry.after), on: [...new Set(s.retry.on)] as CallRetry['on'] };
    } catch (e) {
      problems.push(`${where}.retry.after: ${(e as Error).message}`);
    }
  }
  return {
    key: s.key,
    kind: s.type,
    delay,
    variants,
    config: {
      // An empty title or note is none (the task then takes its default title), as for subjects.
      ...(s.title?.trim() ? { title: s.title } : {}),
      ...(s.notes?.trim() ? { notes: s.notes } : {}),
      ...(s.wait_for_task !== undefined ? { waitForTask: s.wait_for_task } : {}),
      ...(s.signature === false ? { signature: false as const } : {}),
      ...(retry ? { retry } : {}),
      ...(s.experiment ? { experiment: experimentFromDocument(s.experiment) } : {}),
    },
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

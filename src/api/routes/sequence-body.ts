import { z } from 'zod';
import { MAX_EMAIL_HTML } from '../../common/email-html.ts';
import { experimentSchema, toDocument as settingsToDocument } from '../../experiments/settings.ts';
import type { ExperimentDefinition, SequenceExperimentDocument } from '../../sequence/definition-experiments.ts';
import { armStepSchema, definitionSchema, stepSchema, stopRulesSchema, type DefinitionDocument, type StepDefinition, type SequenceDefinition } from '../../sequence/definition.ts';
import { formatDelay, stopRuleKeys } from '../../sequence/definition-document.ts';
import { conditionSchema } from '../../sequence/conditions.ts';
import { replyRuleIntents, type ArmThen, type ReplyRule } from '../../sequence/model.ts';
import { formatWindow } from '../../calendar/index.ts';

/**
 * The sequence as the API and the web editor carry it: the definition file's fields in the API's
 * camelCase, each validator taken from the one definition schema (sequence/definition.ts), so a
 * setting the YAML form can set is one the API carries (sequence-body.test.ts checks that every
 * key of the definition schema has its counterpart here). The editor's one difference from the
 * file: an email step's first variant is the step's own subject/body (with its key and weight),
 * the others are `variants`.
 *
 * PUT replaces the whole definition, as `cadenza sequence apply` does: a field left out takes the
 * file's default. A client that edits one field sends back everything it got from GET.
 */

const d = definitionSchema.shape;
const st = stepSchema.shape;
const sr = stopRulesSchema.shape;
const variant = st.variants.unwrap().element.shape;

/** A move to another sequence of the workspace (a branch arm's `then`, a reply rule), its first step due no earlier than `after`. */
const moveBody = z
  .object({ moveTo: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i).describe("The target sequence's key"), after: z.string().max(100).default('0 days').describe('e.g. "4 weeks" (read as days), "3 days"') })
  .strict();

export const stopRulesBody = z
  .object({
    onOutOfOffice: sr.on_out_of_office,
    oooDefaultPauseDays: sr.ooo_default_pause_days,
    onMeetingBooked: sr.on_meeting_booked,
    maxSoftBounces: sr.max_soft_bounces,
    stopCompanyOnReply: sr.stop_company_on_reply,
    // An object of optional keys rather than a record: the web type generator writes records keyed by strings only.
    onReply: z
      .object(Object.fromEntries(replyRuleIntents.map((i) => [i, z.union([z.literal('notify'), moveBody]).optional()])) as Record<(typeof replyRuleIntents)[number], z.ZodOptional<z.ZodUnion<[z.ZodLiteral<'notify'>, typeof moveBody]>>>)
      .strict()
      .optional()
      .describe("By the reply's intent, besides stopping: 'notify' (a task for the owner) or a move to another sequence"),
  })
  .strict()
  .describe('Rules left out take their defaults: pause on out-of-office (7 days without a return date), finish on a booked meeting, 3 soft bounces');

const htmlBody = z.string().max(MAX_EMAIL_HTML).default('').describe("The email editor's rich text ('' : a text-only email): sanitized by the server, sent as multipart/alternative with `body` as the text part ('' body: made from the HTML)");
const variantBody = z.object({ key: variant.key, subject: z.string().max(998).describe("'' keeps the step's subject"), body: z.string().max(100_000), html: htmlBody, weight: variant.weight });

/** The experiment settings of the file (experiments/settings.ts) in the API's names; each left out takes its default. */
const ex = experimentSchema.shape;
const experimentBody = z
  .object({ replyWindowDays: ex.reply_window_days, outcome: ex.outcome, alpha: ex.alpha, minSamplePerArm: ex.min_sample_per_arm, tau: ex.tau, autoWinner: ex.auto_winner })
  .strict()
  .describe('Email steps with variants: the A/B experiment (defaults: 14-day reply window, outcome replied, α 0.05, 200 closed sends per arm, τ 0.03, no automatic winner); docs/experiments.md');

/** A step inside a branch arm: every field of a step but `branches` (branches are one level deep). */
export const armStepBody = z.object({
  key: st.key,
  type: armStepSchema.shape.type,
  delay: z.string().max(100).default('0 minutes').describe('e.g. "2 minutes", "3 days", "2 business days"'),
  subject: z.string().max(998).default('').describe("An email step's first variant; '' in a later step: a reply in the thread"),
  body: z.string().max(100_000).default(''),
  html: htmlBody,
  variantKey: variant.key.default('a').describe("The first variant's key"),
  weight: variant.weight.describe("The first variant's weight"),
  title: st.title,
  notes: st.notes,
  waitForTask: st.wait_for_task,
  signature: st.signature.describe("Email steps: false sends it without a signature; left out or true: the sending mailbox's signature"),
  retry: z
    .object({
      attempts: z.number().int().min(1).max(10),
      after: z.string().max(100).default('1 business day').describe('e.g. "2 hours", "1 business day"'),
      on: z.array(z.enum(['no_answer', 'voicemail', 'busy'])).min(1).default(['no_answer', 'voicemail', 'busy']),
    })
    .strict()
    .optional()
    .describe('Call steps: try the call again after these outcomes, up to `attempts` more times'),
  variants: z.array(variantBody).max(10).default([]).describe("An email step's other variants (A/B tests), sent by weight against the first"),
  experiment: experimentBody.optional(),
});

export const armBody = z
  .object({
    key: st.key,
    when: conditionSchema.optional().describe('The condition, as in the definition file (snake_case keys); none: the default arm, last'),
    then: z.union([z.enum(['continue', 'end']), moveBody]).default('continue').describe('After the arm: rejoin after the branch, end, or move to another sequence'),
    steps: z.array(armStepBody).max(20).default([]),
  })
  .strict();

export const stepBody = armStepBody.extend({
  type: st.type,
  branches: z.array(armBody).min(1).max(8).optional().describe('Branch steps: the arms, weighed in order when the branch comes due (docs/sequences.md)'),
});

/** One step's choice in an arm of a sequence experiment (the file's `steps: { KEY: … }`, as a list). */
const armChoiceBody = z
  .object({
    step: st.key.describe("The step's key"),
    variant: variant.key.optional().describe('An email step: the variant this arm sends'),
    delay: z.string().max(100).optional().describe('The delay before the step in this arm, e.g. "2 business days"'),
    sendHours: z.string().max(20).optional().describe('Send hours in the prospect\'s zone, inside the sequence window, e.g. "08:00-10:00"'),
  })
  .strict();

export const sequenceExperimentBody = z
  .object({
    key: st.key,
    replyWindowDays: ex.reply_window_days,
    outcome: ex.outcome,
    alpha: ex.alpha,
    minSamplePerArm: ex.min_sample_per_arm,
    tau: ex.tau,
    autoWinner: ex.auto_winner,
    arms: z
      .array(
        z
          .object({
            key: st.key,
            weight: variant.weight,
            steps: z.array(armChoiceBody).max(50).default([]),
            order: z.array(st.key).min(2).max(20).optional().describe('Step keys in the order this arm runs them'),
          })
          .strict(),
      )
      .min(2)
      .max(8),
  })
  .strict()
  .describe('An experiment over several steps or their timing (docs/experiments.md "Sequence experiments"); the arm is chosen once per enrollment');

export const sequenceInput = z.object({
  key: d.key,
  name: d.name,
  status: d.status,
  window: z.string().min(1).max(200).default('Mon-Fri 09:00-17:00').describe("Lead's local send window, e.g. 'Mon-Fri 09:00-17:00' or 'any'"),
  holidays: d.holidays.describe("Skip the lead's public holidays"),
  jitterMinutes: d.jitter_minutes.describe('Random delay added to each send'),
  trackOpens: d.track_opens,
  trackClicks: d.track_clicks,
  stopRules: stopRulesBody.default({}),
  mailboxes: d.mailboxes.describe('The mailbox pool (addresses); empty: every mailbox of the workspace'),
  steps: z.array(stepBody).min(1).max(50),
  experiments: z.array(sequenceExperimentBody).max(10).default([]),
});
export type SequenceBody = z.output<typeof sequenceInput>;

export const sequenceDetail = sequenceInput.extend({ id: z.uuid(), version: z.number().int() }).meta({ id: 'Sequence' });

/** The body as a definition file would state it (validateDefinition then checks it as a file). */
export function bodyToDocument(b: SequenceBody): DefinitionDocument {
  const stopRules: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b.stopRules)) {
    if (v === undefined) continue;
    if (k === 'onReply') {
      const r: Record<string, unknown> = {};
      for (const [intent, rule] of Object.entries(v as Record<string, 'notify' | z.output<typeof moveBody>>)) r[intent] = rule === 'notify' ? rule : { move_to: rule.moveTo, after: rule.after };
      stopRules.on_reply = r;
    } else stopRules[stopRuleKeys[k as keyof typeof stopRuleKeys]] = v;
  }
  return {
    key: b.key,
    name: b.name,
    status: b.status,
    window: b.window,
    holidays: b.holidays,
    jitter_minutes: b.jitterMinutes,
    track_opens: b.trackOpens,
    track_clicks: b.trackClicks,
    stop_rules: stopRules,
    mailboxes: b.mailboxes,
    ...(b.experiments.length ? { experiments: b.experiments.map(experimentToDocument) } : {}),
    steps: b.steps.map((s) => ({
      ...stepToDocument(s),
      ...(s.branches
        ? {
            branches: s.branches.map((a) => ({
              key: a.key,
              ...(a.when ? { when: a.when } : {}),
              steps: a.steps.map(stepToDocument) as never,
              then: typeof a.then === 'string' ? a.then : { move_to: a.then.moveTo, after: a.then.after },
            })),
          }
        : {}),
    })),
  };
}

function experimentToDocument(x: z.output<typeof sequenceExperimentBody>): SequenceExperimentDocument {
  const { key, arms, replyWindowDays, outcome, alpha, minSamplePerArm, tau, autoWinner } = x;
  return {
    key,
    ...settingsToDocument({ replyWindowDays, outcome, alpha, minSamplePerArm, tau, autoWinner }),
    arms: arms.map((a) => ({
      key: a.key,
      weight: a.weight,
      steps: Object.fromEntries(a.steps.map((c) => [c.step, { ...(c.variant !== undefined ? { variant: c.variant } : {}), ...(c.delay !== undefined ? { delay: c.delay } : {}), ...(c.sendHours !== undefined ? { send_hours: c.sendHours } : {}) }])),
      ...(a.order ? { order: a.order } : {}),
    })),
  };
}

function experimentToBody(x: ExperimentDefinition): z.output<typeof sequenceExperimentBody> {
  return {
    key: x.key,
    ...x.settings,
    arms: x.arms.map((a) => ({
      key: a.key,
      weight: a.weight,
      steps: Object.entries(a.steps).map(([step, c]) => ({ step, ...(c.variant !== undefined ? { variant: c.variant } : {}), ...(c.delay ? { delay: formatDelay(c.delay) } : {}), ...(c.sendHours ? { sendHours: c.sendHours } : {}) })),
      ...(a.order ? { order: a.order } : {}),
    })),
  };
}

function stepToDocument(s: z.output<typeof armStepBody> | z.output<typeof stepBody>): NonNullable<DefinitionDocument['steps']>[number] {
  const plain = s.variants.length === 0 && s.variantKey === 'a' && s.weight === 1;
  const first = { key: s.variantKey, subject: s.subject, body: s.body, ...(s.html ? { html: s.html } : {}), weight: s.weight };
  return {
    key: s.key,
    type: s.type,
    delay: s.delay,
    ...(s.type === 'email' && plain ? { subject: s.subject, ...(s.body ? { body: s.body } : {}), ...(s.html ? { html: s.html } : {}) } : {}),
    ...(s.type === 'email' && !plain ? { variants: [first, ...s.variants.map(({ html, ...v }) => ({ ...v, ...(html ? { html } : {}) }))] } : {}),
    ...(s.title !== undefined ? { title: s.title } : {}),
    ...(s.notes !== undefined ? { notes: s.notes } : {}),
    ...(s.waitForTask !== undefined ? { wait_for_task: s.waitForTask } : {}),
    // Only an email step's: a step the editor turned from an email into a task keeps no choice.
    ...(s.type === 'email' && s.signature !== undefined ? { signature: s.signature } : {}),
    ...(s.retry ? { retry: s.retry } : {}),
    ...(s.experiment ? { experiment: settingsToDocument(s.experiment) } : {}),
  };
}

/** A stored definition as GET answers it. */
export function definitionToBody(def: SequenceDefinition & { id: string; version: number }): z.output<typeof sequenceDetail> {
  return { id: def.id, version: def.version, ...definitionToInput(def) };
}

/** A definition (stored, or read from a YAML text) in the API's names, as PUT takes it. */
export function definitionToInput(def: SequenceDefinition): SequenceBody {
  return {
    key: def.key,
    name: def.name,
    status: def.status,
    window: formatWindow(def.window),
    holidays: def.skipHolidays,
    jitterMinutes: def.jitterMinutes,
    trackOpens: def.tracking.opens,
    trackClicks: def.tracking.clicks,
    stopRules: stopRulesToBody(def.stopRules),
    mailboxes: def.mailboxes,
    experiments: (def.experiments ?? []).map(experimentToBody),
    steps: def.steps.map((s) => ({
      ...stepToBody(s),
      ...(s.branches ? { branches: s.branches.map((a) => ({ key: a.key, ...(a.when ? { when: a.when } : {}), then: thenToBody(a.then), steps: a.steps.map(stepToBody) as z.output<typeof armStepBody>[] })) } : {}),
    })),
  };
}

function thenToBody(t: ArmThen): z.output<typeof armBody>['then'] {
  return typeof t === 'string' ? t : { moveTo: t.moveTo, after: formatDelay(t.after) };
}

function stopRulesToBody(rules: SequenceDefinition['stopRules']): z.output<typeof stopRulesBody> {
  const { onReply, ...rest } = rules;
  if (!onReply) return rest;
  const r: Record<string, 'notify' | { moveTo: string; after: string }> = {};
  for (const [intent, rule] of Object.entries(onReply) as Array<[string, ReplyRule]>) r[intent] = rule === 'notify' ? rule : { moveTo: rule.moveTo, after: formatDelay(rule.after) };
  return { ...rest, onReply: r };
}

function stepToBody(s: StepDefinition): Omit<z.output<typeof armStepBody>, 'type'> & { type: StepDefinition['kind'] } {
  const [first, ...others] = s.variants;
  return {
    key: s.key,
    type: s.kind,
    delay: formatDelay(s.delay),
    subject: first?.subject ?? '',
    body: first?.body ?? '',
    html: first?.html ?? '',
    variantKey: first?.key ?? 'a',
    weight: first?.weight ?? 1,
    ...(s.config.title !== undefined ? { title: s.config.title } : {}),
    ...(s.config.notes !== undefined ? { notes: s.config.notes } : {}),
    ...(s.config.waitForTask !== undefined ? { waitForTask: s.config.waitForTask } : {}),
    ...(s.config.signature === false ? { signature: false } : {}),
    ...(s.config.retry ? { retry: { attempts: s.config.retry.attempts, after: formatDelay(s.config.retry.after), on: s.config.retry.on } } : {}),
    variants: others.map((v) => ({ key: v.key, subject: v.subject ?? '', body: v.body, html: v.html ?? '', weight: v.weight })),
    ...(s.config.experiment ? { experiment: s.config.experiment } : {}),
  };
}

import { formatWindow, parseWindow, type Delay } from '../calendar/index.ts';
import { toDocument as experimentToDocument } from '../experiments/settings.ts';
import type { ArmDefinition, DefinitionDocument, SequenceDefinition, StepDefinition } from './definition.ts';
import type { ArmThen, BranchArm, ReplyRule, StopRules } from './model.ts';
import type { SequenceSettings } from './sequence-repo.ts';
import type { Db, Tx } from '../store/store.ts';
import { experimentsDocument, inStepOrder } from './definition-experiments.ts';

/**
 * The way back from a stored sequence to the file that made it: `loadDefinition` reads what
 * applyDefinition wrote, `toDocument` writes it out as a definition file states it. Together
 * with validateDefinition they are inverse: validate(toDocument(d)) equals d, so the API and
 * `cadenza sequence export` carry every field the YAML form can set (issue 10: a PUT from the
 * web editor used to reset stop rules, holiday skipping and tracking to their defaults).
 */

const unitText: Record<Delay['unit'], string> = { minutes: 'minute', hours: 'hour', days: 'day', business_days: 'business day' };

/** '2 minutes', '1 business day': what parseDelay reads back. */
export function formatDelay(d: Delay): string {
  return `${d.amount} ${unitText[d.unit]}${d.amount === 1 ? '' : 's'}`;
}

/** Each stop rule's name in the definition's model (camelCase) and in the file (snake_case). */
export const stopRuleKeys = {
  onOutOfOffice: 'on_out_of_office',
  oooDefaultPauseDays: 'ooo_default_pause_days',
  onMeetingBooked: 'on_meeting_booked',
  maxSoftBounces: 'max_soft_bounces',
  stopCompanyOnReply: 'stop_company_on_reply',
  onReply: 'on_reply',
} as const;

/** A move (an arm's `then`, a reply rule) as the file states it. */
function moveDocument(m: { moveTo: string; after: Delay }): { move_to: string; after: string } {
  return { move_to: m.moveTo, after: formatDelay(m.after) };
}

export function thenDocument(t: ArmThen): 'continue' | 'end' | { move_to: string; after: string } {
  return typeof t === 'string' ? t : moveDocument(t);
}

/** The stop rules as the file states them (snake_case; reply rules' delays written out). */
export function stopRulesDocument(rules: SequenceDefinition['stopRules']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rules)) {
    if (v === undefined) continue;
    if (k === 'onReply') {
      const r: Record<string, unknown> = {};
      for (const [intent, rule] of Object.entries(v as Record<string, ReplyRule>)) r[intent] = rule === 'notify' ? rule : moveDocument(rule);
      out.on_reply = r;
    } else out[stopRuleKeys[k as keyof typeof stopRuleKeys]] = v;
  }
  return out;
}

function stepDocument(s: StepDefinition): NonNullable<DefinitionDocument['steps']>[number] {
  const only = s.variants.length === 1 ? s.variants[0]! : undefined;
  // One variant 'a' of weight 1 is what `subject`/`body` mean; anything else is written as variants.
  const plain = only && only.key === 'a' && only.weight === 1;
  return {
    key: s.key,
    type: s.kind,
    delay: formatDelay(s.delay),
    ...(s.kind === 'email' && plain ? { ...(only.subject !== null ? { subject: only.subject } : {}), body: only.body, ...(only.html !== null ? { html: only.html } : {}) } : {}),
    ...(s.kind === 'email' && !plain ? { variants: s.variants.map((v) => ({ key: v.key, ...(v.subject !== null ? { subject: v.subject } : {}), body: v.body, ...(v.html !== null ? { html: v.html } : {}), weight: v.weight })) } : {}),
    ...(s.config.title !== undefined ? { title: s.config.title } : {}),
    ...(s.config.notes !== undefined ? { notes: s.config.notes } : {}),
    ...(s.config.waitForTask !== undefined ? { wait_for_task: s.config.waitForTask } : {}),
    ...(s.config.signature === false ? { signature: false } : {}),
    ...(s.config.retry ? { retry: { attempts: s.config.retry.attempts, after: formatDelay(s.config.retry.after), on: s.config.retry.on } } : {}),
    ...(s.config.experiment ? { experiment: experimentToDocument(s.config.experiment) } : {}),
    ...(s.branches
      ? { branches: s.branches.map((a) => ({ key: a.key, ...(a.when ? { when: a.when } : {}), steps: a.steps.map(stepDocument) as never, then: thenDocument(a.then) })) }
      : {}),
  };
}

/** The definition as a file (YAML or JSON) states it, every field written out. */
export function toDocument(def: SequenceDefinition): DefinitionDocument {
  const stopRules = stopRulesDocument(def.stopRules);
  return {
    key: def.key,
    name: def.name,
    status: def.status,
    window: formatWindow(def.window),
    holidays: def.skipHolidays,
    jitter_minutes: def.jitterMinutes,
    track_opens: def.tracking.opens,
    track_clicks: def.tracking.clicks,
    stop_rules: stopRules,
    mailboxes: def.mailboxes,
    steps: def.steps.map(stepDocument),
    ...(def.experiments?.length ? { experiments: experimentsDocument(def.experiments, formatDelay) } : {}),
  };
}

/**
 * A stored sequence as the definition that would create it: live steps in order, live variants,
 * variants and the mailbox pool sorted (both are sets: no order is stored), settings and stop rules as applyDefinition stored
 * them. Undefined when there is no such sequence in the workspace.
 */
export async function loadDefinition(db: Db | Tx, workspaceId: string, sequenceId: string): Promise<(SequenceDefinition & { id: string; version: number }) | undefined> {
  const s = await db.selectFrom('sequence').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', sequenceId).executeTakeFirst();
  if (!s) return undefined;
  const steps = await db.selectFrom('step').selectAll().where('sequence_id', '=', s.id).where('archived_at', 'is', null).orderBy('position').execute();
  const variants = steps.length
    ? await db.selectFrom('variant').selectAll().where('step_id', 'in', steps.map((x) => x.id)).where('archived_at', 'is', null).orderBy('key').execute()
    : [];
  const mailboxes = await db.selectFrom('sequence_mailbox as sm').innerJoin('mailbox as m', 'm.id', 'sm.mailbox_id').select('m.email').where('sm.sequence_id', '=', s.id).orderBy('m.email').execute();
  const settings = (s.settings ?? {}) as SequenceSettings;
  const stored = (s.stop_rules ?? {}) as Partial<StopRules>;
  const stopRules: SequenceDefinition['stopRules'] = {};
  for (const k of Object.keys(stopRuleKeys) as Array<keyof typeof stopRuleKeys>) if (stored[k] !== undefined) (stopRules as Record<string, unknown>)[k] = stored[k];
  return {
    id: s.id,
    version: s.version,
    key: s.key,
    name: s.name,
    status: s.status,
    window: parseWindow(s.send_window as Parameters<typeof parseWindow>[0]),
    skipHolidays: settings.skipHolidays ?? true,
    jitterMinutes: settings.jitterMinutes ?? 45,
    tracking: { opens: settings.trackOpens ?? false, clicks: settings.trackClicks ?? false },
    stopRules,
    mailboxes: mailboxes.map((m) => m.email.toLowerCase()),
    // Steps stand in position order, arm steps right after their branch: the order validation gives the choices.
    ...(settings.experiments?.length ? { experiments: inStepOrder(settings.experiments, steps.map((x) => x.key)) } : {}),
    steps: foldSteps(
      steps.map((st) => {
        const cfg = (st.config ?? {}) as StepDefinition['config'] & StoredBranchConfig;
        const step: StepDefinition = {
          key: st.key,
          kind: st.kind,
          delay: { amount: st.delay_amount, unit: st.delay_unit },
          variants: variants.filter((v) => v.step_id === st.id).map((v) => ({ key: v.key, subject: v.subject, body: v.body, html: v.body_html ?? null, weight: v.weight })),
          config: {
            ...(cfg.title !== undefined ? { title: cfg.title } : {}),
            ...(cfg.notes !== undefined ? { notes: cfg.notes } : {}),
            ...(cfg.waitForTask !== undefined ? { waitForTask: cfg.waitForTask } : {}),
            ...(cfg.signature === false ? { signature: false as const } : {}),
            ...(cfg.retry ? { retry: cfg.retry } : {}),
            ...(cfg.experiment ? { experiment: cfg.experiment } : {}),
          },
        };
        return { step, arms: cfg.arms, arm: cfg.arm };
      }),
    ),
  };
}

/** What apply-definition.ts flattenSteps adds to a step's config: a branch's arms, an arm step's place. */
export interface StoredBranchConfig {
  arms?: BranchArm[];
  arm?: { branch: string; key: string };
}

/** The live steps in position order folded back into branches: each arm step goes into its arm. */
function foldSteps(rows: Array<{ step: StepDefinition; arms: BranchArm[] | undefined; arm: { branch: string; key: string } | undefined }>): StepDefinition[] {
  const out: StepDefinition[] = [];
  const armsOf = new Map<string, Map<string, ArmDefinition>>();
  for (const { step, arms, arm } of rows) {
    const home = arm ? armsOf.get(arm.branch)?.get(arm.key) : undefined;
    if (home) {
      home.steps.push(step);
      continue;
    }
    if (step.kind === 'branch') {
      step.branches = (arms ?? []).map((a) => ({ key: a.key, ...(a.when ? { when: a.when } : {}), then: a.then, steps: [] }));
      armsOf.set(step.key, new Map(step.branches.map((a) => [a.key, a])));
    }
    out.push(step);
  }
  return out;
}

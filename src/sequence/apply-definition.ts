import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Store } from '../store/store.ts';
import type { SequenceDefinition, StepDefinition } from './definition.ts';
import type { SequenceSettings } from './sequence-repo.ts';

/** Live steps stand 10 apart so that a removed step can keep a place between its old neighbours. */
export const POSITION_GAP = 10;

export interface ApplySummary {
  sequenceId: string;
  created: boolean;
  version: number;
  added: string[];
  updated: string[];
  removed: string[];
  restored: string[];
  mailboxes: number;
}

interface ExistingStep {
  id: string;
  key: string;
  position: number;
  archived: boolean;
}

/**
 * Where each step stands after an edit. Live steps take their order from the file. A removed step
 * stays just after the step that preceded it before the edit (walking back past other removed
 * ones), so an enrollment whose last step was removed continues from that point (see plan.ts).
 */
export function placeSteps(existing: ExistingStep[], liveKeys: string[]): Map<string, number> {
  const pos = new Map<string, number>();
  liveKeys.forEach((k, i) => pos.set(k, i * POSITION_GAP));
  const old = existing.slice().sort((a, b) => a.position - b.position);
  for (let i = 0; i < old.length; i++) {
    const s = old[i]!;
    if (pos.has(s.key) && liveKeys.includes(s.key)) continue;
    let anchor = -POSITION_GAP;
    for (let j = i - 1; j >= 0; j--) {
      const p = liveKeys.indexOf(old[j]!.key);
      if (p >= 0) {
        anchor = p * POSITION_GAP;
        break;
      }
    }
    // Several removed steps after one anchor keep their old relative order.
    let offset = 1;
    for (let j = i - 1; j >= 0 && !liveKeys.includes(old[j]!.key); j--) offset++;
    pos.set(s.key, anchor + Math.min(offset, POSITION_GAP - 1));
  }
  return pos;
}

/**
 * A branched definition as the step table keeps it: each arm's steps stand right after their
 * branch step, arm after arm, then the steps where the arms rejoin. The branch step's config
 * carries its arms (key, condition, what follows); each arm step's carries its branch and arm, by
 * key (a key is a step's identity for life). loadDefinition (definition-document.ts) folds them back.
 */
export function flattenSteps(steps: StepDefinition[]): Array<Omit<StepDefinition, 'config' | 'branches'> & { config: Record<string, unknown> }> {
  return steps.flatMap((s) => {
    const { branches, ...step } = s;
    if (!branches) return [{ ...step, config: { ...step.config } }];
    return [
      { ...step, config: { ...step.config, arms: branches.map((a) => ({ key: a.key, ...(a.when ? { when: a.when } : {}), then: a.then })) } },
      ...branches.flatMap((a) => a.steps.map(({ branches: _none, ...x }) => ({ ...x, config: { ...x.config, arm: { branch: s.key, key: a.key } } }))),
    ];
  });
}

/**
 * Creates or updates a sequence from a definition in one transaction. Steps are matched by key:
 * new keys are added, missing keys archived (never deleted: send requests and history point at
 * them), a returning key is restored. The version is bumped so caches and running enrollments see
 * the change; the caller re-plans the enrollments afterwards (EnrollmentService.replanSequence).
 */
export async function applyDefinition(
  store: Store,
  deps: { clock: Clock; random: Random },
  workspaceId: string,
  def: SequenceDefinition,
): Promise<ApplySummary> {
  const now = new Date(deps.clock.now());
  const id = () => newId(deps.clock.now(), deps.random);
  return store.db.transaction().execute(async (tx) => {
    const mailboxes = def.mailboxes.length
      ? await tx.selectFrom('mailbox').select(['id', 'email']).where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).execute()
      : [];
    const byEmail = new Map(mailboxes.map((m) => [m.email.toLowerCase(), m.id]));
    const unknown = def.mailboxes.filter((m) => !byEmail.has(m));
    if (unknown.length) throw cadenzaError('NOT_FOUND', `unknown mailbox${unknown.length > 1 ? 'es' : ''}: ${unknown.join(', ')}`, { mailboxes: unknown });

    const current = await tx.selectFrom('sequence').selectAll().where('workspace_id', '=', workspaceId).where('key', '=', def.key).forUpdate().executeTakeFirst();
    const row = {
      name: def.name,
      status: def.status,
      send_window: JSON.stringify(def.window),
      stop_rules: JSON.stringify(def.stopRules),
      settings: JSON.stringify({ skipHolidays: def.skipHolidays, jitterMinutes: def.jitterMinutes, trackOpens: def.tracking.opens, trackClicks: def.tracking.clicks, ...(def.experiments?.length ? { experiments: def.experiments } : {}) } satisfies SequenceSettings),
      updated_at: now,
    };
    let sequenceId: string;
    let version: number;
    if (current) {
      sequenceId = current.id;
      version = current.version + 1;
      await tx.updateTable('sequence').set({ ...row, version }).where('id', '=', sequenceId).execute();
    } else {
      sequenceId = id();
      version = 1;
      await tx.insertInto('sequence').values({ id: sequenceId, workspace_id: workspaceId, key: def.key, ...row }).execute();
    }

    const existing = await tx.selectFrom('step').select(['id', 'key', 'position', 'archived_at']).where('sequence_id', '=', sequenceId).execute();
    const byKey = new Map(existing.map((s) => [s.key, s]));
    const flat = flattenSteps(def.steps);
    const liveKeys = flat.map((s) => s.key);
    const positions = placeSteps(
      existing.map((s) => ({ id: s.id, key: s.key, position: s.position, archived: s.archived_at !== null })),
      liveKeys,
    );
    const summary: ApplySummary = { sequenceId, created: !current, version, added: [], updated: [], removed: [], restored: [], mailboxes: def.mailboxes.length };

    for (const s of flat) {
      const old = byKey.get(s.key);
      const values = {
        position: positions.get(s.key)!,
        kind: s.kind,
        delay_amount: s.delay.amount,
        delay_unit: s.delay.unit,
        config: JSON.stringify(s.config),
        archived_at: null,
      };
      let stepId: string;
      if (old) {
        stepId = old.id;
        await tx.updateTable('step').set(values).where('id', '=', stepId).execute();
        (old.archived_at ? summary.restored : summary.updated).push(s.key);
      } else {
        stepId = id();
        await tx.insertInto('step').values({ id: stepId, sequence_id: sequenceId, key: s.key, ...values }).execute();
        summary.added.push(s.key);
      }
      await tx.updateTable('variant').set({ archived_at: now }).where('step_id', '=', stepId).where('key', 'not in', s.variants.length ? s.variants.map((v) => v.key) : ['']).where('archived_at', 'is', null).execute();
      for (const v of s.variants) {
        await tx
          .insertInto('variant')
          .values({ id: id(), step_id: stepId, key: v.key, subject: v.subject, body: v.body, body_html: v.html, weight: v.weight })
          .onConflict((oc) => oc.columns(['step_id', 'key']).doUpdateSet({ subject: v.subject, body: v.body, body_html: v.html, weight: v.weight, archived_at: null }))
          .execute();
      }
    }
    for (const old of existing) {
      if (liveKeys.includes(old.key)) continue;
      await tx.updateTable('step').set({ position: positions.get(old.key)!, archived_at: old.archived_at ?? now }).where('id', '=', old.id).execute();
      if (!old.archived_at) summary.removed.push(old.key);
    }

    await tx.deleteFrom('sequence_mailbox').where('sequence_id', '=', sequenceId).execute();
    if (def.mailboxes.length) {
      await tx.insertInto('sequence_mailbox').values(def.mailboxes.map((m) => ({ sequence_id: sequenceId, mailbox_id: byEmail.get(m)! }))).execute();
    }
    return summary;
  });
}

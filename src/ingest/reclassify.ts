import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import type { Applied, EnrollmentService } from '../sequence/enrollment-service.ts';
import type { Store } from '../store/store.ts';
import { decide, type IngestAction, type IngestStep } from './act.ts';
import { carryOut } from './pipeline.ts';
import { loadTargets } from './store.ts';
import type { Classification, MailLabel } from './types.ts';

/** The labels a person can give a message: what the enrollment should make of it. */
export const PERSON_LABELS = ['human_reply', 'auto_reply', 'bounce', 'unsubscribe_request', 'auto_generated'] as const satisfies readonly MailLabel[];
export type PersonLabel = (typeof PERSON_LABELS)[number];

export interface ReclassifyResult {
  action: IngestAction;
  /** The enrollment's state after the change, or null when the message is threaded to none. */
  enrollmentState: string | null;
}

/**
 * A person's verdict on an inbound message (the review queue, or a one-click relabel): the label
 * is stored with full confidence and the 'person' rung, and the enrollment gets what the ingestion
 * pipeline would have done with that verdict, carried out by the pipeline's own carryOut (act.ts
 * decide: stop on a reply, and the company's other enrollments where the sequence says so;
 * suppress on an opt-out or hard bounce; pause until the return date). A message that was held
 * for review paused its enrollment; a verdict that asks for nothing resumes it.
 */
export async function reclassify(
  deps: { store: Store; service: EnrollmentService; clock: Clock },
  o: { workspaceId: string; messageRowId: string; label: PersonLabel; returnDate?: number | null; by: string },
): Promise<ReclassifyResult> {
  const now = deps.clock.now();
  const { result, applied } = await deps.store.db.transaction().execute(async (tx) => {
    const m = await tx
      .selectFrom('message')
      .select(['id', 'enrollment_id', 'message_id', 'action'])
      .where('id', '=', o.messageRowId)
      .where('workspace_id', '=', o.workspaceId)
      .where('direction', '=', 'inbound')
      .forUpdate()
      .executeTakeFirst();
    if (!m) throw cadenzaError('NOT_FOUND', 'no such inbound message in this workspace');
    const c: Classification = {
      label: o.label,
      confidence: 1,
      reason: `relabelled by ${o.by}`.slice(0, 200),
      rung: 'person',
      ...(o.label === 'auto_reply' ? { returnDate: o.returnDate ?? null } : {}),
    };
    const target = m.enrollment_id ? (await loadTargets(tx, [m.enrollment_id])).get(m.enrollment_id) ?? null : null;
    // No send: a person's verdict never counts a bounce against a mailbox (the pipeline counted
    // the message once already, if it read it as one).
    const d = decide(c, target);
    const applied: Applied[] = [];
    if (target) {
      const resume = !d.steps.some((s) => s.do === 'event') && m.action === 'needs_review' && target.state === 'paused';
      const steps: IngestStep[] = resume ? [...d.steps, { do: 'event', event: { type: 'resume' } }] : d.steps;
      const done = await carryOut(tx, deps.service, { workspaceId: o.workspaceId, target, messageId: m.message_id, source: c.reason, now }, steps);
      applied.push(...done.target, ...done.others);
    }
    await tx
      .updateTable('message')
      .set({ label: c.label, confidence: 1, reason: c.reason, rung: 'person', action: d.action, needs_review: false, reviewed_at: new Date(now), return_at: d.returnAt === null ? null : new Date(d.returnAt) })
      .where('id', '=', m.id)
      .execute();
    const state = m.enrollment_id ? await tx.selectFrom('enrollment').select('state').where('id', '=', m.enrollment_id).executeTakeFirst() : undefined;
    return { result: { action: d.action, enrollmentState: state?.state ?? null }, applied };
  });
  deps.service.notify(applied);
  return result;
}

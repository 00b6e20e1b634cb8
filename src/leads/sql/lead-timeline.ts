import { readableBy, type MailReader } from '../../mailbox/sql/readable-mailboxes.ts';
import type { Db } from '../../store/store.ts';

/** The lead's enrollments with their sequence's name, oldest first. */
export async function leadEnrollments(db: Db, workspaceId: string, leadId: string) {
  return db
    .selectFrom('enrollment as e')
    .innerJoin('sequence as s', 's.id', 'e.sequence_id')
    .select(['e.id', 'e.sequence_id', 's.name', 'e.state', 'e.state_reason'])
    .where('e.workspace_id', '=', workspaceId)
    .where('e.lead_id', '=', leadId)
    .orderBy('e.created_at')
    .execute();
}

/**
 * What a lead's timeline is made of, for these enrollments of theirs: the engine's journal, mail
 * sent and received (received mail only from the mailboxes the reader may read), opens and clicks,
 * tasks. Each source is capped (500 newest; 200 tasks): a lead's page shows its recent history,
 * not an unbounded log.
 */
export async function timelineSources(db: Db, workspaceId: string, enrollmentIds: string[], reader: MailReader) {
  const [events, messages, tracking, tasks] = await Promise.all([
    db.selectFrom('event').select(['enrollment_id', 'type', 'payload', 'at']).where('workspace_id', '=', workspaceId).where('enrollment_id', 'in', enrollmentIds).orderBy('at', 'desc').limit(500).execute(),
    db
      .selectFrom('message')
      .select(['enrollment_id', 'direction', 'subject', 'label', 'confidence', 'at', 'received_at'])
      .where('workspace_id', '=', workspaceId)
      .where('enrollment_id', 'in', enrollmentIds)
      .where((eb) => eb.or([eb('direction', '=', 'outbound'), readableBy(reader, 'mailbox_id')]))
      .orderBy('at', 'desc')
      .limit(500)
      .execute(),
    db
      .selectFrom('tracking_event')
      .select(['enrollment_id', 'kind', 'url', 'verdict', 'confidence', 'at'])
      .where('workspace_id', '=', workspaceId)
      .where('enrollment_id', 'in', enrollmentIds)
      .where('kind', 'in', ['open', 'click'])
      .orderBy('at', 'desc')
      .limit(500)
      .execute(),
    db.selectFrom('task').select(['enrollment_id', 'kind', 'title', 'state', 'outcome', 'due_at', 'completed_at']).where('workspace_id', '=', workspaceId).where('enrollment_id', 'in', enrollmentIds).limit(200).execute(),
  ]);
  return { events, messages, tracking, tasks };
}

/** The lead's calls, newest first, at most 200 (the timeline shows recent history). */
export async function leadCalls(db: Db, workspaceId: string, leadId: string) {
  return db
    .selectFrom('phone_call')
    .select(['direction', 'source', 'state', 'outcome', 'notes', 'duration_ms', 'enrollment_id', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('lead_id', '=', leadId)
    .orderBy('created_at', 'desc')
    .limit(200)
    .execute();
}

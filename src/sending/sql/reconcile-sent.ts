import { sql } from 'kysely';
import type { Db, Tx } from '../../store/store.ts';

/** A sequence email step an enrollment of the database can send: what a Sent copy may be the send of. */
export interface StepKey {
  enrollmentId: string;
  stepId: string;
  workspaceId: string;
  leadEmail: string;
}

// -- name: step-keys-of-workspace
// Every (enrollment, email step of its sequence) of the workspace, archived steps included (a copy
// may be of a step archived since). Thousands of enrollments × a few steps: one read.
export async function stepKeysOfWorkspace(db: Db, workspaceId: string): Promise<StepKey[]> {
  const r = await sql<{ enrollment_id: string; step_id: string; workspace_id: string; email: string }>`
    select e.id as enrollment_id, s.id as step_id, e.workspace_id, l.email
    from enrollment e
    join step s on s.sequence_id = e.sequence_id and s.kind = 'email'
    join lead l on l.id = e.lead_id
    where e.workspace_id = ${workspaceId}`.execute(db);
  return r.rows.map((x) => ({ enrollmentId: x.enrollment_id, stepId: x.step_id, workspaceId: x.workspace_id, leadEmail: x.email }));
}

export interface RecordCopy {
  requestId: string;
  rowId: string;
  workspaceId: string;
  mailboxId: string;
  enrollmentId: string;
  stepId: string;
  messageId: string;
  state: 'sent' | 'possibly_sent';
  at: Date;
  subject: string | null;
  inReplyTo: string | null;
  from: string;
  to: string[];
  note: string;
  now: Date;
}

/** What the database held for the step before the copy was recorded. */
export type Recorded = { outcome: 'recorded' } | { outcome: 'already'; messageId: string | null; state: string };

// -- name: record-sent-copy
// The step's request becomes sent (possibly_sent for a copy that never settled) under the copy's
// Message-ID, whatever state the restored database left it in (queued, in flight, unknown,
// cancelled) or created sent when the step's request did not exist yet at the restore point; a
// request already sent or possibly sent is left as it is. The outbound message row is written as
// recordSent writes it (replies thread to it; the next step's References name it).
export async function recordSentCopy(tx: Tx, c: RecordCopy): Promise<Recorded> {
  const before = await sql<{ state: string; message_id: string | null }>`
    select state, message_id from send_request where enrollment_id = ${c.enrollmentId} and step_id = ${c.stepId} for update`.execute(tx);
  const was = before.rows[0];
  if (was && (was.state === 'sent' || was.state === 'possibly_sent')) return { outcome: 'already', messageId: was.message_id, state: was.state };
  const now = c.now;
  await sql`
    insert into send_request (id, workspace_id, enrollment_id, step_id, mailbox_id, state, due_at, message_id, attempts, last_error, created_at, updated_at)
    values (${c.requestId}, ${c.workspaceId}, ${c.enrollmentId}, ${c.stepId}, ${c.mailboxId}, ${c.state}, ${c.at}, ${c.messageId}, 1, ${c.note}, ${now}, ${now})
    on conflict (enrollment_id, step_id) do update
      set state = excluded.state, message_id = excluded.message_id, mailbox_id = excluded.mailbox_id,
          last_error = excluded.last_error, updated_at = excluded.updated_at`.execute(tx);
  await sql`
    insert into message (id, workspace_id, mailbox_id, enrollment_id, send_request_id, direction, message_id, in_reply_to, refs, subject, from_addr, to_addrs, at)
    select ${c.rowId}, ${c.workspaceId}, ${c.mailboxId}, ${c.enrollmentId}, r.id, 'outbound', ${c.messageId}, ${c.inReplyTo}, '{}', ${c.subject}, ${c.from}, ${c.to}, ${c.at}
    from send_request r where r.enrollment_id = ${c.enrollmentId} and r.step_id = ${c.stepId}
    on conflict (mailbox_id, message_id) do nothing`.execute(tx);
  return { outcome: 'recorded' };
}

import { sql } from 'kysely';
import { parseWindow } from '../calendar/index.ts';
import type { EnrollmentState } from '../sequence/model.ts';
import type { Db, Tx } from '../store/store.ts';
import type { SyncCursor } from '../mailbox/sync/source.ts';
import type { EnrollmentTarget } from './act.ts';

/** The ingestion pipeline's SQL: cursors, inbound rows, quarantine, enrollment targets, review queue. */

export interface InboundRow {
  id: string;
  workspaceId: string;
  mailboxId: string;
  enrollmentId: string | null;
  messageId: string;
  inReplyTo: string | null;
  refs: string[];
  threadId: string | null;
  subject: string;
  fromAddr: string | null;
  toAddrs: string[];
  /** Where answers go (RFC 5322 3.6.2) and who else was copied: the inbox's reply reads them. */
  replyTo: string[];
  ccAddrs: string[];
  at: number;
  folder: 'inbox' | 'junk' | 'sent' | 'other';
  providerKey: string;
  receivedAt: number | null;
  label: string;
  confidence: number;
  reason: string;
  rung: string;
  intent: string | null;
  intentConfidence: number | null;
  bounce: unknown | null;
  returnAt: number | null;
  threadVia: string;
  action: string;
  newText: string;
  excerpt: string;
  needsReview: boolean;
}

const d = (ms: number | null) => (ms === null ? null : new Date(ms));

/**
 * Inserts an inbound message unless this copy (mailbox, provider key) or this message (mailbox,
 * Message-ID) is already stored: a replayed batch or a resync's re-yield. True when inserted, and
 * only then may the caller act on it (promise 5: a replay never acts twice).
 */
export async function insertInbound(tx: Tx, r: InboundRow): Promise<boolean> {
  const res = await sql<{ id: string }>`
    insert into message (id, workspace_id, mailbox_id, enrollment_id, direction, message_id, in_reply_to, refs, thread_id, subject,
                         from_addr, to_addrs, reply_to, cc_addrs, at, folder, provider_key, received_at, label, confidence, reason, rung, intent,
                         intent_confidence, bounce, return_at, thread_via, action, new_text, excerpt, needs_review)
    values (${r.id}, ${r.workspaceId}, ${r.mailboxId}, ${r.enrollmentId}, 'inbound', ${r.messageId}, ${r.inReplyTo}, ${r.refs}::text[],
            ${r.threadId}, ${r.subject}, ${r.fromAddr}, ${r.toAddrs}::text[], ${r.replyTo}::text[], ${r.ccAddrs}::text[], ${new Date(r.at)}, ${r.folder}, ${r.providerKey},
            ${d(r.receivedAt)}, ${r.label}, ${r.confidence}, ${r.reason}, ${r.rung}, ${r.intent}, ${r.intentConfidence},
            ${r.bounce === null ? null : JSON.stringify(r.bounce)}::jsonb, ${d(r.returnAt)}, ${r.threadVia}, ${r.action}, ${r.newText},
            ${r.excerpt}, ${r.needsReview})
    on conflict do nothing
    returning id`.execute(tx);
  return res.rows.length > 0;
}

export interface QuarantineRow {
  id: string;
  workspaceId: string;
  mailboxId: string;
  providerKey: string;
  folder: string | null;
  reason: string;
  raw: Uint8Array | null;
  rawSize: number | null;
  at: number;
}

export async function insertQuarantine(tx: Tx, rows: QuarantineRow[]): Promise<number> {
  let n = 0;
  for (const q of rows) {
    const r = await sql`
      insert into quarantine (id, workspace_id, mailbox_id, provider_key, folder, reason, raw, raw_size, at)
      values (${q.id}, ${q.workspaceId}, ${q.mailboxId}, ${q.providerKey}, ${q.folder}, ${q.reason.slice(0, 2000)},
              ${q.raw ? Buffer.from(q.raw.buffer, q.raw.byteOffset, q.raw.byteLength) : null}, ${q.rawSize}, ${new Date(q.at)})
      on conflict (mailbox_id, provider_key) do nothing`.execute(tx);
    n += Number(r.numAffectedRows ?? 0n);
  }
  return n;
}

/** The stored cursor of a mailbox (null: never synced). */
export async function loadCursor(db: Db | Tx, mailboxId: string): Promise<SyncCursor | null> {
  const r = await db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', mailboxId).executeTakeFirst();
  return (r?.cursor as SyncCursor | null | undefined) ?? null;
}

export async function saveCursor(tx: Tx, mailboxId: string, cursor: SyncCursor, at: number, o: { resync: boolean; fenceToken: number | null }): Promise<void> {
  await sql`
    insert into mailbox_sync (mailbox_id, cursor, updated_at, resyncs, fence_token)
    values (${mailboxId}, ${JSON.stringify(cursor)}::jsonb, ${new Date(at)}, ${o.resync ? 1 : 0}, ${o.fenceToken})
    on conflict (mailbox_id) do update set
      cursor = excluded.cursor, updated_at = excluded.updated_at, last_error = null, last_error_at = null,
      resyncs = mailbox_sync.resyncs + excluded.resyncs, fence_token = excluded.fence_token`.execute(tx);
}

export async function recordSyncError(db: Db, mailboxId: string, error: string, at: number): Promise<void> {
  await sql`
    insert into mailbox_sync (mailbox_id, cursor, updated_at, last_error, last_error_at)
    values (${mailboxId}, null, ${new Date(at)}, ${error.slice(0, 2000)}, ${new Date(at)})
    on conflict (mailbox_id) do update set last_error = excluded.last_error, last_error_at = excluded.last_error_at`.execute(db);
}

/** After a pull works again (one that yielded no batch writes no cursor to clear it with). */
export async function clearSyncError(db: Db, mailboxId: string): Promise<void> {
  await db.updateTable('mailbox_sync').set({ last_error: null, last_error_at: null }).where('mailbox_id', '=', mailboxId).execute();
}

interface TargetRow {
  id: string;
  workspace_id: string;
  state: EnrollmentState;
  time_zone: string;
  email_norm: string;
  country: string | null;
  region: string | null;
  send_window: unknown;
  settings: unknown;
  stop_rules: unknown;
}

/** The enrollments a batch threads to, with their lead's calendar and their sequence's options. */
export async function loadTargets(tx: Tx, enrollmentIds: string[]): Promise<Map<string, EnrollmentTarget>> {
  const out = new Map<string, EnrollmentTarget>();
  if (!enrollmentIds.length) return out;
  const r = await sql<TargetRow>`
    select e.id, e.workspace_id, e.state, e.time_zone, l.email_norm, l.country, l.region, s.send_window, s.settings, s.stop_rules
    from enrollment e join lead l on l.id = e.lead_id join sequence s on s.id = e.sequence_id
    where e.id = any(${enrollmentIds}::uuid[])`.execute(tx);
  for (const row of r.rows) {
    const settings = (row.settings ?? {}) as { skipHolidays?: boolean };
    const rules = (row.stop_rules ?? {}) as { stopCompanyOnReply?: boolean };
    let window;
    try {
      window = parseWindow(row.send_window as Parameters<typeof parseWindow>[0]);
    } catch {
      window = { kind: 'any' as const };
    }
    out.set(row.id, {
      enrollmentId: row.id,
      workspaceId: row.workspace_id,
      state: row.state,
      leadEmail: row.email_norm,
      zone: row.time_zone,
      country: row.country,
      region: row.region,
      window,
      skipHolidays: settings.skipHolidays ?? true,
      stopCompanyOnReply: rules.stopCompanyOnReply === true,
    });
  }
  return out;
}

/** The enrollment a send request belongs to, within the workspace (for our unsubscribe mailto: tokens). */
export async function enrollmentOfSend(tx: Tx, workspaceId: string, sendRequestId: string): Promise<string | null> {
  const r = await tx.selectFrom('send_request').select('enrollment_id').where('id', '=', sendRequestId).where('workspace_id', '=', workspaceId).executeTakeFirst();
  return r?.enrollment_id ?? null;
}

/** The review queue: low-confidence messages waiting for a person, oldest first. */
export async function reviewQueue(db: Db, workspaceId: string, limit = 100) {
  return db
    .selectFrom('message')
    .select(['id', 'mailbox_id', 'enrollment_id', 'message_id', 'subject', 'from_addr', 'at', 'label', 'confidence', 'reason', 'rung', 'intent', 'new_text'])
    .where('workspace_id', '=', workspaceId)
    .where('needs_review', '=', true)
    .where('reviewed_at', 'is', null)
    .orderBy('at')
    .limit(limit)
    .execute();
}

export async function markReviewed(db: Db, messageRowId: string, at: number): Promise<boolean> {
  const r = await db.updateTable('message').set({ reviewed_at: new Date(at) }).where('id', '=', messageRowId).where('reviewed_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

import { sql, type RawBuilder } from 'kysely';
import { parseWindow } from '../calendar/index.ts';
import type { EnrollmentState } from '../sequence/model.ts';
import type { Db, Tx } from '../store/store.ts';
import type { SyncCursor } from '../mailbox/sync/source.ts';
import { holdsSql } from '../ops/leases.ts';
import { oneStatement } from '../store/one-statement.ts';
import type { EnrollmentTarget } from './act.ts';
import { calendarColumns } from '../sequence/sql/calendar-country.ts';

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
  /** The HTML part, cut (pipeline.ts STORED_HTML_CHARS); null for a plain-text mail. */
  bodyHtml: string | null;
  needsReview: boolean;
}

/**
 * Inserts a batch's inbound messages in one statement, each unless this copy (mailbox, provider
 * key) or this message (mailbox, Message-ID) is already stored: a replayed batch or a resync's
 * re-yield. Returns the ids of the rows inserted, and only those may the caller act on (promise 5:
 * a replay never acts twice). Rows go in as one JSON document (json_to_recordset), which carries
 * the array and JSON columns as they are, where unnest would flatten arrays of arrays.
 */
// -- name: ingest-insert-inbound
export async function insertInbound(tx: Tx, rows: readonly InboundRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const doc = JSON.stringify(
    rows.map((r) => ({ ...r, at: new Date(r.at).toISOString(), receivedAt: iso(r.receivedAt), returnAt: iso(r.returnAt) })),
  );
  const res = await sql<{ id: string }>`
    insert into message (id, workspace_id, mailbox_id, enrollment_id, direction, message_id, in_reply_to, refs, thread_id, subject,
                         from_addr, to_addrs, reply_to, cc_addrs, at, folder, provider_key, received_at, label, confidence, reason, rung, intent,
                         intent_confidence, bounce, return_at, thread_via, action, new_text, excerpt, body_html, needs_review)
    select r."id", r."workspaceId", r."mailboxId", r."enrollmentId", 'inbound', r."messageId", r."inReplyTo", r."refs", r."threadId", r."subject",
           r."fromAddr", r."toAddrs", r."replyTo", r."ccAddrs", r."at", r."folder", r."providerKey", r."receivedAt", r."label", r."confidence",
           r."reason", r."rung", r."intent", r."intentConfidence", r."bounce", r."returnAt", r."threadVia", r."action", r."newText", r."excerpt",
           r."bodyHtml", r."needsReview"
    from json_to_recordset(${doc}::json) as r("id" uuid, "workspaceId" uuid, "mailboxId" uuid, "enrollmentId" uuid, "messageId" text,
         "inReplyTo" text, "refs" text[], "threadId" text, "subject" text, "fromAddr" text, "toAddrs" text[], "replyTo" text[], "ccAddrs" text[],
         "at" timestamptz, "folder" text, "providerKey" text, "receivedAt" timestamptz, "label" text, "confidence" real, "reason" text,
         "rung" text, "intent" text, "intentConfidence" real, "bounce" jsonb, "returnAt" timestamptz, "threadVia" text, "action" text,
         "newText" text, "excerpt" text, "bodyHtml" text, "needsReview" boolean)
    on conflict do nothing
    returning id`.execute(tx);
  return new Set(res.rows.map((r) => r.id));
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

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

/**
 * Quarantine rows in one statement (each once per mailbox + provider key). Returns how many were
 * new. The raw bytes travel as hex text: both drivers pass a text array the same way.
 */
// -- name: ingest-insert-quarantine
export async function insertQuarantine(tx: Tx, rows: readonly QuarantineRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const col = <T>(f: (q: QuarantineRow) => T) => rows.map(f);
  const r = await sql`
    insert into quarantine (id, workspace_id, mailbox_id, provider_key, folder, reason, raw, raw_size, at)
    select u.id, u.ws, u.mb, u.key, u.folder, u.reason, decode(u.raw, 'hex'), u.size, u.at
    from unnest(${col((q) => q.id)}::uuid[], ${col((q) => q.workspaceId)}::uuid[], ${col((q) => q.mailboxId)}::uuid[], ${col((q) => q.providerKey)}::text[],
                ${col((q) => q.folder)}::text[], ${col((q) => q.reason.slice(0, 2000))}::text[],
                ${col((q) => (q.raw ? Buffer.from(q.raw.buffer, q.raw.byteOffset, q.raw.byteLength).toString('hex') : null))}::text[], ${col((q) => q.rawSize)}::int[],
                ${col((q) => new Date(q.at).toISOString())}::timestamptz[])
      as u(id, ws, mb, key, folder, reason, raw, size, at)
    on conflict (mailbox_id, provider_key) do nothing`.execute(tx);
  return Number(r.numAffectedRows ?? 0n);
}

/** The stored cursor of a mailbox (null: never synced). */
export async function loadCursor(db: Db | Tx, mailboxId: string): Promise<SyncCursor | null> {
  const r = await db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', mailboxId).executeTakeFirst();
  return (r?.cursor as SyncCursor | null | undefined) ?? null;
}

/**
 * Stores the batch's cursor, in the batch's transaction, only while the sync lease is still ours
 * when a fence is given: the lease row is read `for share` in the same statement, so no other owner
 * can take it over until this transaction ends. False when fenced: the caller rolls the batch back
 * (the new owner replays it from the stored cursor). `alsoWrite`: the batch's last writes to other
 * tables, carried in the same round trip (store/one-statement.ts); rolled back with the rest when fenced.
 */
// -- name: ingest-save-cursor
export async function saveCursor(
  tx: Tx,
  mailboxId: string,
  cursor: SyncCursor,
  at: number,
  o: { resync: boolean; fence: { resource: string; token: number } | null; alsoWrite?: ReadonlyArray<RawBuilder<unknown>> },
): Promise<boolean> {
  const owned = o.fence ? holdsSql(o.fence.resource, o.fence.token, at) : sql`true`;
  const rows = await oneStatement(
    tx,
    o.alsoWrite ?? [],
    sql<{ mailbox_id: string }>`
      insert into mailbox_sync (mailbox_id, cursor, updated_at, resyncs, fence_token)
      select ${mailboxId}, ${JSON.stringify(cursor)}::jsonb, ${new Date(at)}, ${o.resync ? 1 : 0}, ${o.fence?.token ?? null}::bigint
      where ${owned}
      on conflict (mailbox_id) do update set
        cursor = excluded.cursor, updated_at = excluded.updated_at, last_error = null, last_error_at = null,
        resyncs = mailbox_sync.resyncs + excluded.resyncs, fence_token = excluded.fence_token
      returning mailbox_id`,
  );
  return rows.length > 0;
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

/** What a target is read from: an enrollment (e), its lead (l) and its sequence (s). */
export interface TargetRow {
  target_id: string | null;
  target_workspace_id: string;
  state: EnrollmentState;
  time_zone: string;
  email_norm: string;
  country: string | null;
  region: string | null;
  send_window: unknown;
  settings: unknown;
  stop_rules: unknown;
}

/** The columns of a TargetRow, for a query that joins enrollment e, lead l and sequence s (thread.ts reads them with the sends). */
export const TARGET_COLUMNS = sql`e.id as target_id, e.workspace_id as target_workspace_id, e.state, e.time_zone, l.email_norm, ${calendarColumns}, s.send_window, s.settings, s.stop_rules`;

/** The enrollments a batch threads to, with their lead's calendar and their sequence's options. */
export async function loadTargets(tx: Tx, enrollmentIds: string[]): Promise<Map<string, EnrollmentTarget>> {
  const out = new Map<string, EnrollmentTarget>();
  if (!enrollmentIds.length) return out;
  const r = await sql<TargetRow>`
    select ${TARGET_COLUMNS}
    from enrollment e join lead l on l.id = e.lead_id join sequence s on s.id = e.sequence_id
    where e.id = any(${enrollmentIds}::uuid[])`.execute(tx);
  for (const row of r.rows) out.set(row.target_id!, toTarget(row));
  return out;
}

export function toTarget(row: TargetRow): EnrollmentTarget {
  const settings = (row.settings ?? {}) as { skipHolidays?: boolean };
  const rules = (row.stop_rules ?? {}) as { stopCompanyOnReply?: boolean };
  let window;
  try {
    window = parseWindow(row.send_window as Parameters<typeof parseWindow>[0]);
  } catch {
    window = { kind: 'any' as const };
  }
  return {
    enrollmentId: row.target_id!,
    workspaceId: row.target_workspace_id,
    state: row.state,
    leadEmail: row.email_norm,
    zone: row.time_zone,
    country: row.country,
    region: row.region,
    window,
    skipHolidays: settings.skipHolidays ?? true,
    stopCompanyOnReply: rules.stopCompanyOnReply === true,
  };
}

/** The enrollments of send requests within the workspace, by request id (for our unsubscribe mailto: tokens). */
export async function enrollmentsOfSends(tx: Tx, workspaceId: string, sendRequestIds: readonly string[]): Promise<Map<string, string>> {
  if (sendRequestIds.length === 0) return new Map();
  // One array parameter, not an IN list: the text stays the same for any count (one prepared statement).
  const ids = [...new Set(sendRequestIds)];
  const r = await tx.selectFrom('send_request').select(['id', 'enrollment_id']).where(sql<boolean>`id = any(${ids}::uuid[])`).where('workspace_id', '=', workspaceId).execute();
  return new Map(r.map((x) => [x.id, x.enrollment_id]));
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

import { sql, type RawBuilder } from 'kysely';

/**
 * The purge's statements: each touches at most `limit` rows of one workspace older than `cutoff`,
 * picked by an index range, and returns one row per row it changed. Each runs as its own statement
 * (its own transaction), so no lock is held longer than one batch takes, and the sender, sync and
 * API keep working beside a purge of millions of rows.
 */
export type PurgeStatement = (workspaceId: string, cutoff: Date, limit: number) => RawBuilder<{ n: number }>;

// -- name: purge-message-bodies
const messageBodies: PurgeStatement = (ws, cutoff, limit) => sql`
  update message set new_text = null, excerpt = null, body_html = null
   where id in (select id from message
                 where workspace_id = ${ws}::uuid and at < ${cutoff} and (new_text is not null or excerpt is not null or body_html is not null)
                 limit ${limit})
  returning 1 as n`;

// -- name: purge-quarantine-raw
const quarantineRaw: PurgeStatement = (ws, cutoff, limit) => sql`
  update quarantine set raw = null
   where id in (select id from quarantine where workspace_id = ${ws}::uuid and at < ${cutoff} and raw is not null limit ${limit})
  returning 1 as n`;

// -- name: purge-messages
// A message's row goes whole: a reply to it that comes later is not threaded by its Message-ID any
// more (the reason messagesDays has a floor of 30 days).
const messages: PurgeStatement = (ws, cutoff, limit) => sql`
  delete from message
   where id in (select id from message where workspace_id = ${ws}::uuid and at < ${cutoff} limit ${limit})
  returning 1 as n`;

// -- name: purge-quarantine
const quarantine: PurgeStatement = (ws, cutoff, limit) => sql`
  delete from quarantine
   where id in (select id from quarantine where workspace_id = ${ws}::uuid and at < ${cutoff} limit ${limit})
  returning 1 as n`;

// -- name: purge-reply-requests
// A reply still being handed over ('sending') is the inbox's idempotency record: it stays.
const replyRequests: PurgeStatement = (ws, cutoff, limit) => sql`
  delete from reply_request
   where workspace_id = ${ws}::uuid
     and idempotency_key in (select idempotency_key from reply_request
                              where workspace_id = ${ws}::uuid and created_at < ${cutoff} and state <> 'sending'
                              limit ${limit})
  returning 1 as n`;

// -- name: purge-events
// On the journal's primary key (at, id): the range on `at` reads only the old months' partitions.
const events: PurgeStatement = (ws, cutoff, limit) => sql`
  delete from event
   where (at, id) in (select at, id from event where at < ${cutoff} and workspace_id = ${ws}::uuid limit ${limit})
  returning 1 as n`;

// -- name: purge-tracking-events
const trackingEvents: PurgeStatement = (ws, cutoff, limit) => sql`
  delete from tracking_event
   where id in (select id from tracking_event where workspace_id = ${ws}::uuid and at < ${cutoff} limit ${limit})
  returning 1 as n`;

// -- name: purge-webhook-deliveries
// Pending deliveries are still to be made, whatever their age.
const webhookDeliveries: PurgeStatement = (ws, cutoff, limit) => sql`
  delete from webhook_delivery
   where id in (select id from webhook_delivery
                 where workspace_id = ${ws}::uuid and state <> 'pending' and created_at < ${cutoff}
                 limit ${limit})
  returning 1 as n`;

// -- name: purge-import-rejects
// By the import's start: an import still running keeps its rejects.
const importRejects: PurgeStatement = (ws, cutoff, limit) => sql`
  delete from lead_import_reject
   where (import_id, line) in (select r.import_id, r.line
                                 from lead_import_reject r join lead_import i on i.id = r.import_id
                                where i.workspace_id = ${ws}::uuid and i.created_at < ${cutoff} and i.status <> 'running'
                                limit ${limit})
  returning 1 as n`;

// -- name: purge-unmatched-calls
// Calls no lead owns (a lead's calls go with the lead), ended ones only: a call still ringing or
// talking is left to finish. Its recording and transcript go with it (foreign keys, on delete cascade).
const unmatchedCalls: PurgeStatement = (ws, cutoff, limit) => sql`
  delete from phone_call
   where id in (select id from phone_call
                 where workspace_id = ${ws}::uuid and created_at < ${cutoff} and lead_id is null and state = 'ended'
                 limit ${limit})
  returning 1 as n`;

// -- name: purge-capture-quarantine
const captureQuarantine: PurgeStatement = (ws, cutoff, limit) => sql`
  delete from call_capture_quarantine
   where id in (select id from call_capture_quarantine where workspace_id = ${ws}::uuid and at < ${cutoff} limit ${limit})
  returning 1 as n`;

/** What each retention kind purges, as named counts in the purge's report; whole messages before their text, which they take with them. */
export const PURGES = {
  messagesDays: { messages, quarantine, reply_requests: replyRequests },
  messageBodiesDays: { message_bodies: messageBodies, quarantine_raw: quarantineRaw },
  eventsDays: { events, tracking_events: trackingEvents, webhook_deliveries: webhookDeliveries },
  importRejectsDays: { import_rejects: importRejects },
  unmatchedCallsDays: { unmatched_calls: unmatchedCalls, capture_quarantine: captureQuarantine },
} as const satisfies Record<string, Record<string, PurgeStatement>>;

import { z } from 'zod';
import { csvRecord } from '../../common/csv-write.ts';
import { cadenzaError } from '../../common/errors.ts';
import { PERSON_LABELS, reclassify } from '../../ingest/reclassify.ts';
import { findInboundMessage } from '../../ingest/sql/inbox.ts';
import { inboxFilterSchema } from '../../inbox/filter.ts';
import { safeReplyHtml, frameCsp, replyFrameDocument } from '../../inbox/reply-html.ts';
import { listInbox, messageHtml, messageWithThread, THREAD_PAGE, type TriagedRow } from '../../inbox/sql/list.ts';
import { listNotes } from '../../inbox/sql/notes.ts';
import { audit } from '../audit/actor.ts';
import { inboxReader } from '../auth/inbox-scope.ts';
import type { ReplyRequest, ReplySent } from '../../sending/reply.ts';
import { askCredentialTask } from '../../sending/credential-tasks/ask-task.ts';
import { credentialAsk, enrollmentService } from '../context.ts';
import { decodeCursor, encodeCursor, page, pageQuery } from '../http/pagination.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const teamLabel = z.object({ id: z.uuid(), name: z.string(), color: z.string() }).meta({ id: 'InboxTeamLabel' });

const inboxItem = z
  .object({
    id: z.uuid(),
    mailboxId: z.uuid().nullable(),
    mailboxEmail: z.string().nullable(),
    threadId: z.string().nullable(),
    enrollmentId: z.uuid().nullable(),
    leadId: z.uuid().nullable(),
    from: z.string().nullable(),
    replyTo: z.array(z.string()).describe('Reply-To addresses: where a reply goes (else from)'),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    subject: z.string().nullable(),
    at: z.iso.datetime(),
    folder: z.string().nullable(),
    label: z.string().nullable().describe('human_reply, auto_reply, bounce, unsubscribe_request, feedback, auto_generated, delivery_report, challenge'),
    confidence: z.number().nullable(),
    reason: z.string().nullable().describe('Why the classifier (or a person) chose the label'),
    rung: z.string().nullable(),
    intent: z.string().nullable(),
    action: z.string().nullable().describe('What was done: reply (enrollment stopped), hard_bounce, out_of_office, unsubscribe, needs_review, inbox…'),
    needsReview: z.boolean(),
    excerpt: z.string().nullable(),
    company: z.string().nullable().describe("The lead's company"),
    leadName: z.string().nullable(),
    sequenceId: z.uuid().nullable(),
    sequenceName: z.string().nullable(),
    repId: z.uuid().nullable().describe('The member who owns the mailbox that received it'),
    unread: z.boolean().describe('Not yet read by the caller (read marks are per person)'),
    assigneeId: z.uuid().nullable(),
    snoozedUntil: z.iso.datetime().nullable(),
    doneAt: z.iso.datetime().nullable().describe('Marked done (archived)'),
    teamLabels: z.array(teamLabel).describe("The team's own labels on it"),
  })
  .meta({ id: 'InboxMessage' });

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const leadName = (r: TriagedRow) => [r.first_name, r.last_name].filter(Boolean).join(' ') || null;
const toItem = (r: TriagedRow): z.output<typeof inboxItem> => ({
  id: r.id, mailboxId: r.mailbox_id, mailboxEmail: r.mailbox_email, threadId: r.thread_id, enrollmentId: r.enrollment_id, leadId: r.lead_id,
  from: r.from_addr, replyTo: r.reply_to, to: r.to_addrs, cc: r.cc_addrs, subject: r.subject, at: r.at.toISOString(), folder: r.folder, label: r.label, confidence: r.confidence, reason: r.reason,
  rung: r.rung, intent: r.intent, action: r.action, needsReview: r.needs_review, excerpt: r.excerpt,
  company: r.company, leadName: leadName(r), sequenceId: r.sequence_id, sequenceName: r.sequence_name, repId: r.rep_id, unread: r.unread,
  assigneeId: r.assignee_user_id, snoozedUntil: iso(r.snoozed_until), doneAt: iso(r.done_at), teamLabels: r.team_labels,
});

/** Rows an inbox export holds at most (the newest first). */
const EXPORT_MAX = 50_000;
const CSV_COLUMNS = ['at', 'from', 'lead_name', 'company', 'subject', 'excerpt', 'label', 'intent', 'action', 'sequence', 'mailbox', 'unread', 'assignee_id', 'snoozed_until', 'done_at', 'team_labels'];
const csvLine = (r: TriagedRow) =>
  csvRecord([
    r.at.toISOString(), r.from_addr ?? '', leadName(r) ?? '', r.company ?? '', r.subject ?? '', r.excerpt ?? '', r.label ?? '', r.intent ?? '', r.action ?? '',
    r.sequence_name ?? '', r.mailbox_email ?? '', r.unread ? 'yes' : 'no', r.assignee_user_id ?? '', iso(r.snoozed_until) ?? '', iso(r.done_at) ?? '', r.team_labels.map((l) => l.name).join('; '),
  ]);

const note = z.object({ id: z.uuid(), body: z.string(), at: z.iso.datetime(), authorId: z.uuid().nullable(), author: z.string().nullable() }).meta({ id: 'InboxNote' });

export const inboxRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/inbox',
    summary: 'The unified inbox: inbound mail across the mailboxes the caller may read, newest first, searched and filtered (a saved view is this query)',
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: inboxFilterSchema.extend(pageQuery),
    example: () => ({ query: { limit: 10, q: 'acme', status: 'inbox' as const, unread: 'true' as const } }),
    response: z.object({ items: z.array(inboxItem), nextCursor: z.string().nullable() }),
    handler: async ({ ctx, ws, query }) => {
      const { cursor, limit, ...filter } = query;
      const rows = await listInbox(ctx.store.db, ws.workspaceId, inboxReader(ws), ws.userId, filter, new Date(ctx.clock.now()), decodeCursor(cursor), limit + 1);
      const p = page(rows, limit, (r) => ({ at: r.listed_at, id: r.id }));
      return { items: p.items.map(toItem), nextCursor: p.nextCursor };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/inbox.csv',
    summary: `The unified inbox's list as CSV, with the same search and filters (a saved view's query), newest first, at most ${EXPORT_MAX.toLocaleString('en')} messages of the mailboxes the caller may read; formula-looking cells are neutralised`,
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: inboxFilterSchema,
    response: z.string().describe('text/csv'),
    handler: async (c) => {
      const { ctx, ws, query, reply } = c;
      const rows = await listInbox(ctx.store.db, ws.workspaceId, inboxReader(ws), ws.userId, query, new Date(ctx.clock.now()), undefined, EXPORT_MAX);
      await audit(c, { action: 'export.downloaded', target: 'inbox.csv', detail: { rows: rows.length } });
      reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="inbox.csv"');
      return csvRecord(CSV_COLUMNS) + rows.map(csvLine).join('');
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/inbox/messages/:messageId',
    summary: `One message with its thread: what was sent and what came back, oldest first; the newest ${THREAD_PAGE} (threadLimit), and earlierCursor for the page before`,
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({ messageId: z.uuid() }),
    query: z.object({
      threadBefore: z.string().max(200).optional().describe("The thread's messages before this one: a previous answer's earlierCursor"),
      threadLimit: z.coerce.number().int().min(1).max(THREAD_PAGE).default(THREAD_PAGE).describe('How many of the thread, the newest first taken'),
    }),
    example: () => ({ query: { threadLimit: 50 } }),
    response: z.object({
      message: inboxItem,
      newText: z.string().nullable(),
      html: z
        .object({ blockedImages: z.number().int().describe('Remote images held back until the reader asks (…/frame?images=true)') })
        .nullable()
        .describe('Present when the message has HTML: GET …/frame serves it sanitized, for a sandboxed frame'),
      notes: z.array(note),
      thread: z.array(inboxItem.extend({ direction: z.enum(['inbound', 'outbound']), newText: z.string().nullable(), hasHtml: z.boolean() })),
      earlierCursor: z.string().nullable().describe('Present when the thread has earlier messages: pass it as threadBefore'),
    }),
    handler: async ({ ctx, ws, params, query }) => {
      const found = await messageWithThread(ctx.store.db, ws.workspaceId, inboxReader(ws), ws.userId, params.messageId, decodeCursor(query.threadBefore), query.threadLimit);
      if (!found) throw cadenzaError('NOT_FOUND', 'no such message in this workspace');
      const { message: m, thread, earlier } = found;
      const notes = await listNotes(ctx.store.db, m.id);
      return {
        message: toItem(m),
        newText: m.new_text,
        html: m.body_html ? { blockedImages: safeReplyHtml(m.body_html, { images: false }).blockedImages } : null,
        notes: notes.map((n) => ({ id: n.id, body: n.body, at: n.created_at.toISOString(), authorId: n.author_user_id, author: n.author_name ?? n.author_email })),
        thread: thread.map((r) => ({ ...toItem(r), direction: r.direction, newText: r.new_text, hasHtml: r.body_html !== null })),
        earlierCursor: earlier ? encodeCursor(earlier) : null,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/inbox/messages/:messageId/frame',
    summary:
      "A message's HTML as a document for a sandboxed frame: rebuilt from an allowlist (no scripts, handlers, forms or frames), the quoted history folded, served with a CSP that forbids scripts and, unless images=true, remote images",
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({ messageId: z.uuid() }),
    query: z.object({ images: z.enum(['true', 'false']).default('false').describe("true: load this message's remote images (they may tell the sender it was read)") }),
    example: () => ({ query: { images: 'false' as const } }),
    response: z.string().describe('text/html'),
    handler: async ({ ctx, ws, params, query, reply }) => {
      const m = await messageHtml(ctx.store.db, ws.workspaceId, inboxReader(ws), params.messageId);
      if (!m) throw cadenzaError('NOT_FOUND', 'no such message in this workspace');
      const opts = { images: query.images === 'true' };
      reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', frameCsp(opts))
        // Framed by the inbox only (the CSP's frame-ancestors says the same to browsers that read it).
        .header('x-frame-options', 'SAMEORIGIN')
        .header('cache-control', 'private, no-store');
      return replyFrameDocument(m.body_html ?? '', opts);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/inbox/messages/:messageId/reclassify',
    summary: 'Relabel an inbound message; the enrollment follows (stop on a reply, suppress on an opt-out or hard bounce, pause until a return date)',
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({ messageId: z.uuid() }),
    body: z.object({
      label: z.enum(PERSON_LABELS),
      returnDate: z.iso.date().optional().describe('For auto_reply: the day the person is back'),
    }),
    example: () => ({ body: { label: 'human_reply' as const } }),
    response: z.object({ action: z.string(), enrollmentState: z.string().nullable() }),
    handler: async ({ ctx, ws, params, body, principal }) => {
      // Only a message the caller may read may be relabelled by them.
      const seen = await findInboundMessage(ctx.store.db, ws.workspaceId, inboxReader(ws), params.messageId);
      if (!seen) throw cadenzaError('NOT_FOUND', 'no such inbound message in this workspace');
      const by = principal?.kind === 'api_key' ? `api key ${principal.keyId}` : `member ${ws.userId}`;
      const r = await reclassify(
        { store: ctx.store, service: enrollmentService(ctx), clock: ctx.clock },
        { workspaceId: ws.workspaceId, messageRowId: params.messageId, label: body.label, returnDate: body.returnDate ? Date.parse(`${body.returnDate}T00:00:00Z`) : null, by },
      );
      // A message cleared from review resumes its enrollment: its next step may be due now.
      if (r.enrollmentState === 'active') ctx.workDue?.();
      return r;
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/inbox/messages/:messageId/reply',
    summary:
      "Reply in plain text from the mailbox that received the message, in the same thread (In-Reply-To, References, Re: subject, Gmail threadId), to its Reply-To (else From); replyAll copies its other recipients. An idempotency key makes a retry or a double click send once",
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({ messageId: z.uuid() }),
    body: z.object({
      text: z.string().trim().min(1).max(100_000).describe('The reply, plain text'),
      replyAll: z.boolean().default(false).describe("Copy (Cc) the message's other To and Cc recipients; the workspace's own mailboxes never receive it"),
      idempotencyKey: z
        .string()
        .min(8)
        .max(200)
        .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
        .optional()
        .describe('Any unique string per reply (a UUID). The same key again never sends twice: a sent reply answers as before; after SEND_UNCONFIRMED the Sent folder is searched again first'),
    }),
    example: () => ({ body: { text: 'Thanks, Tuesday at 10 works for me.', idempotencyKey: 'a4f1c7de-reply-example' } }),
    response: z.object({
      id: z.uuid().describe('The outbound message row'),
      messageId: z.string().describe("The reply's Message-ID"),
      mailboxId: z.uuid(),
      to: z.array(z.string()).describe("The message's Reply-To addresses, else its sender"),
      cc: z.array(z.string()),
      subject: z.string(),
      threadId: z.string().nullable(),
      confirmedBy: z.enum(['server', 'sent_folder']).describe("server: it answered that it took the reply; sent_folder: the connection broke as it was handed over, and the mailbox's Sent folder shows it"),
      replayed: z.boolean().describe('true: this idempotency key had already sent it; nothing was sent now'),
    }),
    handler: async ({ ctx, ws, params, body }) => {
      // Only a message the caller may read may be answered, and a member answers only from their own mailboxes.
      const seen = await findInboundMessage(ctx.store.db, ws.workspaceId, inboxReader(ws), params.messageId);
      if (!seen) throw cadenzaError('NOT_FOUND', 'no such inbound message in this workspace');
      if (!seen.mailbox_id) throw cadenzaError('NOT_FOUND', 'no inbound message with a mailbox in this workspace');
      // The reply is sent by the sender role, which alone opens the mailbox's credential (least
      // privilege): sending/credential-tasks/reply-task.ts runs sendReply there, its idempotency
      // key and Sent-folder settling unchanged; this waits for its answer.
      const input: Omit<ReplyRequest, 'workspaceId'> = {
        messageRowId: params.messageId,
        text: body.text,
        replyAll: body.replyAll,
        idempotencyKey: body.idempotencyKey ?? null,
        ...(ws.role === 'member' ? { ownerUserId: ws.userId } : {}),
      };
      return (await askCredentialTask(credentialAsk(ctx), { workspaceId: ws.workspaceId, mailboxId: seen.mailbox_id, kind: 'reply', input: { ...input } })) as ReplySent;
    },
  }),
];

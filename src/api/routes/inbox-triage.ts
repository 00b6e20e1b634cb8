import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { findInboundMessage, type InboxRow } from '../../ingest/sql/inbox.ts';
import { inboxFilterSchema, type InboxFilter } from '../../inbox/filter.ts';
import { applyLabel, createLabel, deleteLabel, findLabel, LABEL_COLORS, listLabels, removeLabel } from '../../inbox/sql/labels.ts';
import { addNote, deleteNote, findNote } from '../../inbox/sql/notes.ts';
import { assigneeCanRead, hasRead, markRead, setTriage } from '../../inbox/sql/triage.ts';
import { deleteView, listViews, saveView } from '../../inbox/sql/views.ts';
import { findMailbox } from '../../mailbox/sql/mailboxes.ts';
import { findSequenceId } from '../../sequence/sql/sequences.ts';
import type { Db } from '../../store/store.ts';
import { findMember } from '../auth/members.ts';
import type { WorkspaceAccess } from '../auth/access.ts';
import { inboxReader } from '../auth/inbox-scope.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * Triage in the unified inbox: read marks (per person), assignment, snooze, done, the team's
 * labels, internal notes and saved views. Every route that names a message first finds it among
 * what the caller may read (their inbox scope, api/auth/inbox-scope.ts): a message outside it is
 * NOT_FOUND, as in GET …/inbox/messages/{id}.
 */

async function readableInbound(db: Db, ws: WorkspaceAccess, messageId: string): Promise<InboxRow> {
  const m = await findInboundMessage(db, ws.workspaceId, inboxReader(ws), messageId);
  if (!m) throw cadenzaError('NOT_FOUND', 'no such inbound message in this workspace');
  return m;
}

/**
 * A view's filters name only what the workspace has: a label, sequence, mailbox or member of
 * another workspace (or none) is refused, not saved as a view that silently shows nothing.
 */
async function checkFilterIds(db: Db, workspaceId: string, f: InboxFilter): Promise<void> {
  const missing = async (field: string, found: Promise<unknown>) => {
    if ((await found) === undefined) throw cadenzaError('INVALID_INPUT', `filters.${field}: no such ${field.slice(0, -2).replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)} in this workspace`, { field: `filters.${field}` });
  };
  if (f.teamLabelId) await missing('teamLabelId', findLabel(db, workspaceId, f.teamLabelId));
  if (f.sequenceId) await missing('sequenceId', findSequenceId(db, workspaceId, f.sequenceId));
  if (f.mailboxId) await missing('mailboxId', findMailbox(db, workspaceId, f.mailboxId));
  if (f.repId) await missing('repId', findMember(db, workspaceId, f.repId));
  if (f.assigneeId) await missing('assigneeId', findMember(db, workspaceId, f.assigneeId));
}

/** Read marks and views are a person's: an API key belongs to nobody. */
function person(ws: WorkspaceAccess, what: string): string {
  if (ws.userId === null) throw cadenzaError('FORBIDDEN', `${what} belong to a person; an API key has none (sign in as the member)`);
  return ws.userId;
}

/** Putting a team label on a readable message, or taking it off: the same checks, one act each. */
function messageLabelRoute(method: 'PUT' | 'DELETE', summary: string, act: (db: Db, messageId: string, labelId: string, ws: WorkspaceAccess, now: Date) => Promise<void>) {
  return defineRoute({
    method,
    url: '/api/workspaces/:workspaceId/inbox/messages/:messageId/labels/:labelId',
    summary,
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({ messageId: z.uuid(), labelId: z.uuid() }),
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, ws, params }) => {
      const m = await readableInbound(ctx.store.db, ws, params.messageId);
      if (!(await findLabel(ctx.store.db, ws.workspaceId, params.labelId))) throw cadenzaError('NOT_FOUND', 'no such label in this workspace');
      await act(ctx.store.db, m.id, params.labelId, ws, new Date(ctx.clock.now()));
      return { ok: true as const };
    },
  });
}

const triageState = z.object({
  unread: z.boolean().nullable().describe("The caller's read mark (null for an API key)"),
  assigneeId: z.uuid().nullable(),
  snoozedUntil: z.iso.datetime().nullable(),
  doneAt: z.iso.datetime().nullable(),
});

const labelBody = z.object({ id: z.uuid(), name: z.string(), color: z.enum(LABEL_COLORS) });
const view = z.object({ id: z.uuid(), name: z.string(), filters: inboxFilterSchema, createdAt: z.iso.datetime() }).meta({ id: 'InboxView' });

export const inboxTriageRoutes = [
  defineRoute({
    method: 'PATCH',
    url: '/api/workspaces/:workspaceId/inbox/messages/:messageId',
    summary:
      'Triage a message: read or unread (for the caller), assign to a teammate (or null), snooze until a time (it comes back to the inbox then; null wakes it), done (archived; false brings it back). Fields left out stay',
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({ messageId: z.uuid() }),
    body: z
      .object({
        read: z.boolean().optional(),
        assigneeId: z.uuid().nullable().optional().describe('A member who may read this mailbox’s mail'),
        snoozedUntil: z.iso.datetime({ offset: true }).nullable().optional().describe('A time in the future'),
        done: z.boolean().optional(),
      })
      .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'give at least one of read, assigneeId, snoozedUntil, done' }),
    example: () => ({ body: { read: true, snoozedUntil: '2030-01-07T09:00:00Z' } }),
    response: triageState,
    handler: async ({ ctx, ws, params, body }) => {
      const m = await readableInbound(ctx.store.db, ws, params.messageId);
      const now = new Date(ctx.clock.now());
      const snoozedUntil = body.snoozedUntil === undefined ? undefined : body.snoozedUntil === null ? null : new Date(body.snoozedUntil);
      if (snoozedUntil && snoozedUntil <= now) throw cadenzaError('INVALID_INPUT', 'snooze until a time in the future', { field: 'snoozedUntil' });
      if (body.assigneeId) {
        const can = await assigneeCanRead(ctx.store.db, ws.workspaceId, body.assigneeId, m.mailbox_id);
        if (can === 'not_member') throw cadenzaError('INVALID_INPUT', 'the assignee is not a member of this workspace', { field: 'assigneeId' });
        if (can === 'out_of_scope') throw cadenzaError('CONFLICT', "the assignee reads only their own mailboxes' mail, and this message came to another mailbox", { field: 'assigneeId' });
      }
      if (body.read !== undefined) await markRead(ctx.store.db, person(ws, 'read marks'), [m.id], body.read, now);
      const st = await setTriage(ctx.store.db, ws.workspaceId, m.id, { assigneeUserId: body.assigneeId, snoozedUntil, done: body.done }, now);
      const unread = ws.userId === null ? null : !(await hasRead(ctx.store.db, ws.userId, m.id));
      // A snooze that has ended (its time came, or it was woken now) is no snooze.
      const snoozed = st.snoozed_until && st.snoozed_until > now ? st.snoozed_until.toISOString() : null;
      return { unread, assigneeId: st.assignee_user_id, snoozedUntil: snoozed, doneAt: st.done_at?.toISOString() ?? null };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/inbox/labels',
    summary: "The team's own inbox labels (beside the classifier's)",
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ labels: z.array(labelBody) }),
    handler: async ({ ctx, ws }) => ({ labels: await listLabels(ctx.store.db, ws.workspaceId) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/inbox/labels',
    summary: 'Define a team label (any member); names are unique in the workspace, case aside',
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ name: z.string().trim().min(1).max(40), color: z.enum(LABEL_COLORS).default('gray') }),
    example: () => ({ body: { name: 'Pricing question', color: 'blue' as const } }),
    status: 201,
    response: labelBody,
    handler: async ({ ctx, ws, body }) => createLabel(ctx.store.db, ctx, ws.workspaceId, body.name, body.color),
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/inbox/labels/:labelId',
    summary: 'Delete a team label (admin): it comes off every message',
    tags: ['inbox'],
    access: { workspace: 'admin' },
    params: workspaceParams({ labelId: z.uuid() }),
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, ws, params }) => {
      if (!(await deleteLabel(ctx.store.db, ws.workspaceId, params.labelId))) throw cadenzaError('NOT_FOUND', 'no such label in this workspace');
      return { ok: true as const };
    },
  }),
  messageLabelRoute('PUT', 'Put a team label on a message (again: nothing changes)', (db, m, labelId, ws, now) => applyLabel(db, m, labelId, ws.userId, now)),
  messageLabelRoute('DELETE', 'Take a team label off a message', (db, m, labelId) => removeLabel(db, m, labelId)),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/inbox/messages/:messageId/notes',
    summary: 'Add an internal note to the conversation (seen by the team, never sent)',
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({ messageId: z.uuid() }),
    body: z.object({ body: z.string().trim().min(1).max(5000) }),
    example: () => ({ body: { body: 'Asked for pricing; call Thursday.' } }),
    status: 201,
    response: z.object({ id: z.uuid(), body: z.string(), at: z.iso.datetime(), authorId: z.uuid().nullable() }),
    handler: async ({ ctx, ws, params, body }) => {
      const m = await readableInbound(ctx.store.db, ws, params.messageId);
      const n = await addNote(ctx.store.db, ctx, ws.workspaceId, m.id, ws.userId, body.body);
      return { id: n.id, body: n.body, at: n.created_at.toISOString(), authorId: n.author_user_id };
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/inbox/notes/:noteId',
    summary: 'Delete a note: its author, or an admin',
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({ noteId: z.uuid() }),
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, ws, params }) => {
      const n = await findNote(ctx.store.db, ws.workspaceId, params.noteId);
      // A note on a message outside the caller's scope is as unknown to them as the message.
      if (!n || !(await findInboundMessage(ctx.store.db, ws.workspaceId, inboxReader(ws), n.message_id))) throw cadenzaError('NOT_FOUND', 'no such note in this workspace');
      if (ws.role === 'member' && n.author_user_id !== ws.userId) throw cadenzaError('FORBIDDEN', 'only its author or an admin may delete a note');
      await deleteNote(ctx.store.db, n.id);
      return { ok: true as const };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/inbox/views',
    summary: "The caller's saved inbox views",
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ views: z.array(view) }),
    handler: async ({ ctx, ws }) => ({
      views: (await listViews(ctx.store.db, ws.workspaceId, person(ws, 'saved views'))).map((v) => ({ ...v, createdAt: v.createdAt.toISOString() })),
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/inbox/views',
    summary: "Save a view: a name and the list's filters (GET …/inbox's query), the caller's alone",
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z.object({ name: z.string().trim().min(1).max(60), filters: inboxFilterSchema }),
    example: () => ({ body: { name: 'Interested, unread', filters: { intent: 'interested', unread: 'true' as const } } }),
    status: 201,
    response: view,
    handler: async ({ ctx, ws, body }) => {
      await checkFilterIds(ctx.store.db, ws.workspaceId, body.filters);
      const v = await saveView(ctx.store.db, ctx, ws.workspaceId, person(ws, 'saved views'), body.name, body.filters);
      return { ...v, createdAt: v.createdAt.toISOString() };
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/inbox/views/:viewId',
    summary: 'Delete one of the caller’s saved views',
    tags: ['inbox'],
    access: { workspace: 'member' },
    params: workspaceParams({ viewId: z.uuid() }),
    response: z.object({ ok: z.literal(true) }),
    handler: async ({ ctx, ws, params }) => {
      if (!(await deleteView(ctx.store.db, ws.workspaceId, person(ws, 'saved views'), params.viewId))) throw cadenzaError('NOT_FOUND', 'no such view of yours');
      return { ok: true as const };
    },
  }),
];

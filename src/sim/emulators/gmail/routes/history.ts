import type { FastifyInstance } from 'fastify';
import type { GmailRouteContext } from '../context.ts';
import { gmailErrors } from '../errors.ts';
import type { GmailMailbox, HistoryRecord } from '../mailbox.ts';
import { decodePageToken } from './messages.ts';

/**
 * users.history.list and users.getProfile (gmail-api.json; guides/sync). History records after
 * `startHistoryId`, oldest first, filtered by `historyTypes` and `labelId`, paged; every page
 * carries the mailbox's current `historyId`, which the client stores after the last page. A
 * `startHistoryId` older than the retained history is a 404, the documented "full sync now".
 * Route names for fault injection: 'history.list', 'getProfile'.
 */
const historyTypes = new Set(['messageAdded', 'messageDeleted', 'labelAdded', 'labelRemoved']);

export function registerHistoryRoutes(app: FastifyInstance, ctx: GmailRouteContext & { historyRetentionMs: number | null }): void {
  app.get<{ Params: { userId: string } }>('/gmail/v1/users/:userId/profile', (req, reply) =>
    ctx.run('getProfile', req, reply, (mb) => ({
      status: 200,
      body: { emailAddress: mb.address, messagesTotal: mb.messages.size, threadsTotal: mb.threads.size, historyId: String(mb.historyId) },
    })),
  );

  app.get<{ Params: { userId: string }; Querystring: Record<string, string | string[] | undefined> }>(
    '/gmail/v1/users/:userId/history',
    (req, reply) =>
      ctx.run('history.list', req, reply, (mb) => {
        const q = req.query;
        const one = (k: string) => [q[k] ?? []].flat()[0];
        const startRaw = one('startHistoryId');
        if (startRaw === undefined) return gmailErrors.badRequest('Required parameter: startHistoryId');
        if (!/^\d+$/.test(startRaw)) return gmailErrors.invalidArgument(`Invalid value at 'start_history_id' (TYPE_UINT64), "${startRaw}"`);
        const types = [q.historyTypes ?? []].flat();
        for (const t of types) if (!historyTypes.has(t)) return gmailErrors.invalidArgument(`Invalid value at 'history_types': "${t}"`);
        const labelId = one('labelId');
        const maxResults = one('maxResults') === undefined ? 100 : Number(one('maxResults'));
        if (!Number.isInteger(maxResults) || maxResults < 1 || maxResults > 500) return gmailErrors.badRequest(`Invalid maxResults: ${one('maxResults')}`);
        const after = decodePageToken(one('pageToken'));
        if (after === null) return gmailErrors.badRequest('Invalid pageToken');

        if (ctx.historyRetentionMs !== null) mb.prune(ctx.historyRetentionMs);
        const start = Number(startRaw);
        if (start < mb.retainedFrom) return gmailErrors.notFound();
        const from = Math.max(start, after);
        const all = mb.history.filter((r) => r.id > from && (types.length === 0 || types.includes(r.change.type)) && matchesLabel(mb, r, labelId));
        const page = all.slice(0, maxResults);
        const body: Record<string, unknown> = { historyId: String(mb.historyId) };
        if (page.length) body.history = page.map((r) => render(mb, r));
        if (all.length > page.length) body.nextPageToken = Buffer.from(String(page[page.length - 1]!.id)).toString('base64url');
        return { status: 200, body };
      }),
  );
}

function matchesLabel(mb: GmailMailbox, r: HistoryRecord, labelId: string | undefined): boolean {
  if (labelId === undefined) return true;
  const m = mb.messages.get(r.change.messageId);
  return (m?.labelIds.has(labelId) ?? false) || ('labelIds' in r.change && r.change.labelIds.includes(labelId));
}

function render(mb: GmailMailbox, r: HistoryRecord): Record<string, unknown> {
  const m = mb.messages.get(r.change.messageId);
  const ref = { id: r.change.messageId, threadId: m?.threadId ?? r.change.messageId };
  const full = { ...ref, labelIds: m ? [...m.labelIds] : [] };
  const out: Record<string, unknown> = { id: String(r.id), messages: [ref] };
  switch (r.change.type) {
    case 'messageAdded':
      out.messagesAdded = [{ message: full }];
      break;
    case 'messageDeleted':
      out.messagesDeleted = [{ message: ref }];
      break;
    case 'labelAdded':
      out.labelsAdded = [{ message: full, labelIds: r.change.labelIds }];
      break;
    case 'labelRemoved':
      out.labelsRemoved = [{ message: full, labelIds: r.change.labelIds }];
      break;
  }
  return out;
}

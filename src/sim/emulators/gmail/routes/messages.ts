import type { FastifyInstance } from 'fastify';
import { parseMessage, plausibleAddress, type ParsedMessage } from '../../mime.ts';
import type { EmulatorReply } from '../../server.ts';
import type { GmailRouteContext } from '../context.ts';
import { gmailErrors } from '../errors.ts';
import type { GmailStoredMessage } from '../mailbox.ts';
import { parseGmailQuery } from '../query.ts';

/**
 * users.messages: send, list, get, modify (gmail-api.json in googleapis/google-api-go-client).
 * Route names for fault injection: 'messages.send', 'messages.list', 'messages.get',
 * 'messages.modify'.
 */
export function registerMessageRoutes(app: FastifyInstance, ctx: GmailRouteContext): void {
  app.post<{ Params: { userId: string } }>('/gmail/v1/users/:userId/messages/send', (req, reply) =>
    ctx.run('messages.send', req, reply, async (mb) => {
      const body = req.body as { raw?: unknown; threadId?: unknown } | undefined;
      if (!body || typeof body !== 'object' || Buffer.isBuffer(body) || typeof body.raw !== 'string' || body.raw === '') {
        return gmailErrors.invalidArgument("'raw' RFC822 payload message string or uploading message via /upload/* URL required");
      }
      if (!/^[A-Za-z0-9_-]*={0,2}$/.test(body.raw)) {
        return gmailErrors.invalidArgument("Invalid value at 'message.raw' (TYPE_BYTES), Base64 decoding failed");
      }
      if (body.threadId !== undefined && body.threadId !== null && typeof body.threadId !== 'string') {
        return gmailErrors.invalidArgument("Invalid value at 'message.thread_id' (TYPE_STRING)");
      }
      const raw = Buffer.from(body.raw, 'base64url');
      let parsed: ParsedMessage;
      try {
        parsed = await parseMessage(raw);
      } catch {
        return gmailErrors.invalidArgument('Invalid RFC822 message');
      }
      const bad = recipientProblem(parsed);
      if (bad) return gmailErrors.invalidArgument(bad);
      const threadId = typeof body.threadId === 'string' && body.threadId !== '' ? body.threadId : null;
      // An unknown threadId: 404 (what Gmail answers for an unknown id elsewhere; unverified for send).
      if (threadId !== null && !mb.threads.has(threadId)) return gmailErrors.notFound();
      const m = ctx.store.send(mb, raw, parsed, threadId);
      return { status: 200, body: { id: m.id, threadId: m.threadId, labelIds: [...m.labelIds] } };
    }),
  );

  app.get<{ Params: { userId: string }; Querystring: Record<string, string | string[] | undefined> }>(
    '/gmail/v1/users/:userId/messages',
    (req, reply) =>
      ctx.run('messages.list', req, reply, (mb) => {
        const q = req.query;
        const one = (k: string) => (Array.isArray(q[k]) ? (q[k] as string[])[0] : (q[k] as string | undefined));
        const parsed = parseGmailQuery(one('q') ?? '', ctx.store.clock.now());
        if (!parsed.ok) return gmailErrors.badRequest(parsed.message);
        const labelIds = ([] as string[]).concat(q.labelIds ?? []);
        // Naming SPAM or TRASH in labelIds asks for them as plainly as in:spam does.
        const includeSpamTrash =
          one('includeSpamTrash') === 'true' || parsed.query.includesSpamTrash || labelIds.some((l) => l === 'SPAM' || l === 'TRASH');
        const maxResults = one('maxResults') === undefined ? 100 : Number(one('maxResults'));
        if (!Number.isInteger(maxResults) || maxResults < 1 || maxResults > 500) {
          return gmailErrors.badRequest(`Invalid maxResults: ${one('maxResults')}`);
        }
        const offset = decodePageToken(one('pageToken'));
        if (offset === null) return gmailErrors.badRequest('Invalid pageToken');
        // Newest first, as Gmail lists.
        const all = [...mb.messages.values()]
          .filter((m) => includeSpamTrash || !(m.labelIds.has('SPAM') || m.labelIds.has('TRASH')))
          .filter((m) => labelIds.every((l) => m.labelIds.has(l)))
          .filter((m) => parsed.query.test(m))
          .reverse()
          .sort((a, b) => b.internalDate - a.internalDate);
        const page = all.slice(offset, offset + maxResults);
        const out: Record<string, unknown> = { resultSizeEstimate: all.length };
        if (page.length) out.messages = page.map((m) => ({ id: m.id, threadId: m.threadId }));
        if (offset + maxResults < all.length) out.nextPageToken = Buffer.from(String(offset + maxResults)).toString('base64url');
        return { status: 200, body: out };
      }),
  );

  app.get<{ Params: { userId: string; id: string }; Querystring: Record<string, string | string[] | undefined> }>(
    '/gmail/v1/users/:userId/messages/:id',
    (req, reply) =>
      ctx.run('messages.get', req, reply, (mb) => {
        const m = mb.messages.get(req.params.id);
        if (!m) return gmailErrors.notFound();
        const fmt = [req.query.format ?? 'full'].flat()[0]!;
        const names = ([] as string[]).concat(req.query.metadataHeaders ?? []).map((h) => h.toLowerCase());
        return renderMessage(m, fmt, names);
      }),
  );
  registerModifyRoute(app, ctx);
}

/**
 * System labels a client may add or remove with users.messages.modify (guides/labels: SENT and
 * DRAFT are set by sending and drafting only). The emulator has no user labels, so any other
 * label id is unknown.
 */
const modifiableLabels = new Set(['INBOX', 'SPAM', 'TRASH', 'UNREAD', 'STARRED', 'IMPORTANT', 'CATEGORY_PERSONAL', 'CATEGORY_SOCIAL', 'CATEGORY_PROMOTIONS', 'CATEGORY_UPDATES', 'CATEGORY_FORUMS']);

/** users.messages.modify's documented scopes: gmail.modify, or the full https://mail.google.com/. */
const modifyScopes = ['https://www.googleapis.com/auth/gmail.modify', 'https://mail.google.com/'];

function registerModifyRoute(app: FastifyInstance, ctx: GmailRouteContext): void {
  app.post<{ Params: { userId: string; id: string } }>('/gmail/v1/users/:userId/messages/:id/modify', (req, reply) =>
    ctx.run(
      'messages.modify',
      req,
      reply,
      (mb) => {
        const m = mb.messages.get(req.params.id);
        if (!m) return gmailErrors.notFound();
        const body = (req.body ?? {}) as { addLabelIds?: unknown; removeLabelIds?: unknown };
        const list = (v: unknown) => (v === undefined ? [] : Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null);
        const add = list(body.addLabelIds);
        const remove = list(body.removeLabelIds);
        if (add === null || remove === null) return gmailErrors.invalidArgument("Invalid value at 'add_label_ids' (TYPE_STRING)");
        // An unknown or system-only label: 400 (the text is unverified).
        const bad = [...add, ...remove].find((l) => !modifiableLabels.has(l));
        if (bad !== undefined) return gmailErrors.invalidArgument(`Invalid label: ${bad}`);
        mb.modifyLabels(m.id, add, remove);
        return { status: 200, body: { id: m.id, threadId: m.threadId, labelIds: [...m.labelIds] } };
      },
      modifyScopes,
    ),
  );
}

function renderMessage(m: GmailStoredMessage, format: string, metadataHeaders: string[]): EmulatorReply {
  const base = {
    id: m.id,
    threadId: m.threadId,
    labelIds: [...m.labelIds],
    snippet: '',
    sizeEstimate: m.raw.length,
    historyId: String(m.historyId),
    internalDate: String(m.internalDate),
  };
  switch (format) {
    case 'minimal':
      return { status: 200, body: base };
    case 'metadata': {
      const headers = m.parsed.headers.filter((h) => metadataHeaders.length === 0 || metadataHeaders.includes(h.name.toLowerCase()));
      return { status: 200, body: { ...base, payload: { mimeType: 'message/rfc822', headers } } };
    }
    case 'raw':
      return { status: 200, body: { ...base, raw: m.raw.toString('base64url') } };
    case 'full':
      // The MIME part tree is not emulated yet; refusing beats answering without parts.
      return gmailErrors.badRequest('emulator: format=full is not implemented; use raw or metadata');
    default:
      return gmailErrors.badRequest(`Invalid value for format: ${format}`);
  }
}

/** Gmail's checks on the recipients of a message to send, with its error texts. */
function recipientProblem(p: ParsedMessage): string | null {
  const raws = p.rawRecipientHeaders;
  if (raws.to.length + raws.cc.length + raws.bcc.length === 0) return 'Recipient address required';
  for (const [name, hdr, list] of [
    ['To', raws.to, p.to],
    ['Cc', raws.cc, p.cc],
    ['Bcc', raws.bcc, p.bcc],
  ] as const) {
    if (hdr.length > 0 && list.length === 0 && hdr.some((h) => h.trim() !== '')) return `Invalid ${name} header`;
    if (list.some((a) => !plausibleAddress(a))) return `Invalid ${name} header`;
  }
  if (p.to.length + p.cc.length + p.bcc.length === 0) return 'Recipient address required';
  return null;
}

export function decodePageToken(t: string | undefined): number | null {
  if (t === undefined || t === '') return 0;
  const n = Number(Buffer.from(t, 'base64url').toString('utf8'));
  return Number.isInteger(n) && n >= 0 ? n : null;
}

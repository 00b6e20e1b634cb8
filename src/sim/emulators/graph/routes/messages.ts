import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EmulatorReply } from '../../server.ts';
import type { GraphRouteContext } from '../context.ts';
import { graphErrors } from '../errors.ts';
import { folderId, regularId, resolveFolder, type GraphStoredMessage } from '../mailbox.ts';
import { parseFilter, parseSelect } from '../odata.ts';

/**
 * Messages: list (whole mailbox or one folder) with $filter/$select/$top/$skip, get by id,
 * `$value` (the MIME bytes), move to another folder, and update (PATCH isRead and flag).
 * `Prefer: IdType="ImmutableId"` switches ids to immutable ones. Route names for fault
 * injection: 'messages.list', 'messages.get', 'messages.value', 'messages.move', 'messages.update'.
 */
export const props = new Set([
  'id',
  'createdDateTime',
  'lastModifiedDateTime',
  'receivedDateTime',
  'sentDateTime',
  'subject',
  'internetMessageId',
  'conversationId',
  'parentFolderId',
  'isDraft',
  'isRead',
  'flag',
  'from',
  'toRecipients',
  'ccRecipients',
  'bccRecipients',
]);

const pageDefault = 10; // Graph's default page size for messages

/** Moving and changing a message needs Mail.ReadWrite (Mail.Read only reads). */
const readWrite = ['https://graph.microsoft.com/Mail.ReadWrite'];

type ListRequest = FastifyRequest<{ Params: { user?: string; folder?: string }; Querystring: Record<string, string | undefined> }>;

export function registerMessageRoutes(app: FastifyInstance, ctx: GraphRouteContext): void {
  const list = (req: ListRequest, reply: FastifyReply, byFolder: boolean) =>
    ctx.run('messages.list', req, reply, (mb) => {
      const q = req.query;
      const folder = byFolder ? resolveFolder(req.params.folder ?? '') : null;
      if (byFolder && folder === null) return graphErrors.itemNotFound();
      // OData reads the query string as RFC 3986 does: '+' is a plus, not a space (form encoding
      // is not OData's), so $filter is taken from the raw URL, not from the form-decoded query.
      const rawFilter = rawQueryParam(req.url, '$filter');
      const filter = rawFilter === undefined ? null : parseFilter(rawFilter, props);
      if (filter && !filter.ok) return graphErrors.badRequest(filter.message);
      const select = parseSelect(q.$select, props);
      if (!select.ok) return graphErrors.badRequest(select.message);
      const top = q.$top === undefined ? pageDefault : Number(q.$top);
      const skip = q.$skip === undefined ? 0 : Number(q.$skip);
      if (!Number.isInteger(top) || top < 1 || top > 1000) return graphErrors.badRequest(`Invalid $top: ${q.$top}`);
      if (!Number.isInteger(skip) || skip < 0) return graphErrors.badRequest(`Invalid $skip: ${q.$skip}`);
      const immutable = prefersImmutable(req.headers.prefer);
      const all = mb.messages
        .filter((m) => folder === null || m.folder === folder)
        .map((m) => ({ m, json: render(m, immutable) }))
        .filter((x) => !filter || (filter.ok && filter.filter(x.json)))
        .sort((a, b) => b.m.receivedAt - a.m.receivedAt || b.m.seq - a.m.seq);
      const page = all.slice(skip, skip + top);
      const body: Record<string, unknown> = {
        '@odata.context': `${origin(req)}/v1.0/$metadata#users('${mb.address}')/messages`,
        value: page.map((x) => pick(x.json, select.props)),
      };
      if (skip + top < all.length) {
        // The request's own options with the next $skip, percent-encoded as Graph writes its links.
        const options = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1).split('&').filter((p) => p !== '' && !p.startsWith('$skip=')) : [];
        body['@odata.nextLink'] = `${origin(req)}${req.url.split('?')[0]}?${[...options, `$skip=${skip + top}`].join('&')}`;
      }
      return withPreference({ status: 200, body }, immutable);
    });

  app.get<{ Params: { user?: string }; Querystring: Record<string, string | undefined> }>('/messages', (req, reply) => list(req, reply, false));
  app.get<{ Params: { user?: string; folder: string }; Querystring: Record<string, string | undefined> }>('/mailFolders/:folder/messages', (req, reply) =>
    list(req, reply, true),
  );

  app.get<{ Params: { user?: string; id: string }; Querystring: Record<string, string | undefined> }>('/messages/:id', (req, reply) =>
    ctx.run('messages.get', req, reply, (mb) => {
      const m = mb.byId(req.params.id);
      if (!m) return graphErrors.itemNotFound();
      const select = parseSelect(req.query.$select, props);
      if (!select.ok) return graphErrors.badRequest(select.message);
      const immutable = prefersImmutable(req.headers.prefer);
      return withPreference({ status: 200, body: pick(render(m, immutable), select.props) }, immutable);
    }),
  );

  // message: move (api-reference/v1.0/api/message-move.md): 201 with the message in its new
  // folder, whose regular id changes and immutable id does not. A move to the folder it is in
  // leaves it there (unverified).
  app.post<{ Params: { user?: string; id: string } }>('/messages/:id/move', (req, reply) =>
    ctx.run(
      'messages.move',
      req,
      reply,
      (mb) => {
        const m = mb.byId(req.params.id);
        if (!m) return graphErrors.itemNotFound();
        const dest = (req.body as { destinationId?: unknown } | undefined)?.destinationId;
        if (typeof dest !== 'string' || dest === '') return graphErrors.badRequest("The 'destinationId' parameter is required.");
        const folder = resolveFolder(dest);
        if (folder === null) return graphErrors.itemNotFound();
        if (m.folder !== folder) mb.move(m, folder, ctx.store.clock.now());
        const immutable = prefersImmutable(req.headers.prefer);
        return withPreference({ status: 201, body: render(m, immutable) }, immutable);
      },
      readWrite,
    ),
  );

  // message: update (api-reference/v1.0/api/message-update.md): the writable properties Cadenza
  // sets, isRead and flag.flagStatus; 200 with the message. Any other property is a loud gap.
  app.patch<{ Params: { user?: string; id: string } }>('/messages/:id', (req, reply) =>
    ctx.run(
      'messages.update',
      req,
      reply,
      (mb) => {
        const m = mb.byId(req.params.id);
        if (!m) return graphErrors.itemNotFound();
        const body = req.body as Record<string, unknown> | undefined;
        if (!body || typeof body !== 'object' || Buffer.isBuffer(body)) return graphErrors.badRequest('Empty Payload. JSON content expected.');
        const other = Object.keys(body).find((k) => k !== 'isRead' && k !== 'flag');
        if (other !== undefined) return graphErrors.badRequest(`emulator: updating '${other}' is not implemented`);
        if ('isRead' in body && typeof body.isRead !== 'boolean') return graphErrors.badRequest("Invalid value for property 'isRead'.");
        const flagStatus = (body.flag as { flagStatus?: unknown } | undefined)?.flagStatus;
        if ('flag' in body && flagStatus !== 'notFlagged' && flagStatus !== 'flagged' && flagStatus !== 'complete') return graphErrors.badRequest("Invalid value for property 'flag'.");
        if (typeof body.isRead === 'boolean') m.isRead = body.isRead;
        if ('flag' in body) m.flagStatus = flagStatus as typeof m.flagStatus;
        mb.update(m, ctx.store.clock.now());
        const immutable = prefersImmutable(req.headers.prefer);
        return withPreference({ status: 200, body: render(m, immutable) }, immutable);
      },
      readWrite,
    ),
  );

  app.get<{ Params: { user?: string; id: string } }>('/messages/:id/$value', (req, reply) =>
    ctx.run('messages.value', req, reply, (mb) => {
      const m = mb.byId(req.params.id);
      if (!m) return graphErrors.itemNotFound();
      return { status: 200, headers: { 'content-type': 'text/plain' }, body: m.raw };
    }),
  );
}

export function prefersImmutable(prefer: string | string[] | undefined): boolean {
  return [prefer ?? []].flat().some((p) => /IdType\s*=\s*"?ImmutableId"?/i.test(p));
}

export function withPreference(r: EmulatorReply, immutable: boolean): EmulatorReply {
  return immutable ? { ...r, headers: { ...r.headers, 'preference-applied': 'IdType="ImmutableId"' } } : r;
}

export function origin(req: { headers: { host?: string } }): string {
  return `http://${req.headers.host ?? '127.0.0.1'}`;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const recipient = (address: string) => ({ emailAddress: { name: address, address } });

export function render(m: GraphStoredMessage, immutable: boolean): Record<string, unknown> {
  return {
    '@odata.etag': `W/"CQAAABYAAAA${m.seq}.${m.lastModifiedAt}"`,
    id: immutable ? m.immutableId : regularId(m),
    createdDateTime: iso(m.createdAt),
    lastModifiedDateTime: iso(m.lastModifiedAt),
    receivedDateTime: iso(m.receivedAt),
    sentDateTime: m.sentAt === null ? null : iso(m.sentAt),
    subject: m.parsed.subject,
    internetMessageId: m.internetMessageId,
    conversationId: m.conversationId,
    parentFolderId: folderId(m.folder),
    isDraft: m.isDraft,
    isRead: m.isRead,
    flag: { flagStatus: m.flagStatus },
    from: m.parsed.from ? recipient(m.parsed.from) : null,
    toRecipients: m.parsed.to.map(recipient),
    ccRecipients: m.parsed.cc.map(recipient),
    bccRecipients: m.parsed.bcc.map(recipient),
  };
}

/** $select: the named properties, with id and the etag, which Graph always returns. */
export function pick(json: Record<string, unknown>, select: string[] | null): Record<string, unknown> {
  if (!select) return json;
  const out: Record<string, unknown> = { '@odata.etag': json['@odata.etag'], id: json.id };
  for (const p of select) out[p] = json[p];
  return out;
}

/** A query parameter as it is in the URL, percent-decoded only (no '+' for space). */
export function rawQueryParam(url: string, name: string): string | undefined {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    if (safeDecode(key) !== name) continue;
    return safeDecode(eq < 0 ? '' : part.slice(eq + 1));
  }
  return undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

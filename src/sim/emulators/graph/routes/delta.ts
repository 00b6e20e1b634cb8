import type { FastifyInstance } from 'fastify';
import type { EmulatorReply } from '../../server.ts';
import type { GraphRouteContext } from '../context.ts';
import { graphError, graphErrors } from '../errors.ts';
import { resolveFolder, type FolderName, type GraphMailbox, type GraphStoredMessage } from '../mailbox.ts';
import { parseSelect } from '../odata.ts';
import { origin, pick, prefersImmutable, props, render, withPreference } from './messages.ts';

/**
 * `GET mailFolders/{id}/messages/delta` (api-reference/v1.0/api/message-delta.md,
 * concepts/delta-query-messages.md). Route name for fault injection: 'messages.delta'.
 *
 * The first call (no token) takes `$select` and `$filter=receivedDateTime ge|gt <instant>` and
 * answers the folder's messages page by page (`Prefer: odata.maxpagesize=N`, default 10), each
 * page with an `@odata.nextLink` (`$skiptoken`) until the last, which has an `@odata.deltaLink`
 * (`$deltatoken`). Calling a deltaLink answers only what changed in the folder since: messages
 * created or moved in (in their current state), and `{id, "@removed": {reason: "deleted"}}` for
 * those moved out. The options of the first call are kept in the tokens; options on later calls
 * are ignored, as Graph does.
 *
 * Tokens are the emulator's own (base64url JSON): the change position, the options, when and in
 * which generation they were issued. A token older than `deltaTokenTtlMs`, or issued before
 * `expireDeltaTokens()`, is answered 410 Gone with the error code the test chose
 * (`syncStateNotFound` by default, or `resyncRequired`; concepts/errors.md) and a `Location`
 * header holding the initial URL with an empty `$deltatoken` (delta-query-overview.md).
 */
interface Token {
  /** The folder. */
  f: FolderName;
  /** Changes before this index were seen (-1: an initial round). */
  from: number;
  /** The round covers changes up to this index. */
  to: number;
  /** Items of this round already paged past. */
  o: number;
  s: string | null;
  flt: string | null;
  g: number;
  t: number;
}

const pageDefault = 10;

export function registerDeltaRoutes(app: FastifyInstance, ctx: GraphRouteContext & { deltaTokenTtlMs: number | null }): void {
  app.get<{ Params: { user?: string; folder: string }; Querystring: Record<string, string | undefined> }>(
    '/mailFolders/:folder/messages/delta',
    (req, reply) =>
      ctx.run('messages.delta', req, reply, (mb) => {
        const folder = resolveFolder(req.params.folder);
        if (folder === null) return graphErrors.itemNotFound();
        const q = req.query;
        const now = ctx.store.clock.now();
        const pageSize = maxPageSize(req.headers.prefer) ?? (q.$top ? Number(q.$top) : pageDefault);
        if (!Number.isInteger(pageSize) || pageSize < 1) return graphErrors.badRequest('Invalid page size');
        const self = new URL(req.url, origin(req));
        const initialUrl = `${self.origin}${self.pathname}`;

        let tok: Token;
        const raw = q.$skiptoken ?? q.$deltatoken;
        if (raw !== undefined && raw !== '') {
          const t = decode(raw);
          if (!t || t.f !== folder) return graphErrors.badRequest('Invalid delta token');
          if (t.g < mb.deltaGeneration || (ctx.deltaTokenTtlMs !== null && now - t.t > ctx.deltaTokenTtlMs)) {
            return expired(mb, `${initialUrl}?$deltatoken=`);
          }
          // A deltaLink starts a new round over the changes since its position; a nextLink continues one.
          tok = q.$skiptoken !== undefined ? t : { ...t, from: t.to, to: mb.changes.length, o: 0 };
        } else {
          for (const k of Object.keys(q)) {
            if (!['$select', '$filter', '$top', '$deltatoken', '$skiptoken'].includes(k)) return graphErrors.badRequest(`emulator: delta option not supported: ${k}`);
          }
          const select = parseSelect(q.$select, props);
          if (!select.ok) return graphErrors.badRequest(select.message);
          if (q.$filter !== undefined && !receivedFilter(q.$filter)) {
            return graphErrors.badRequest("The only $filter delta supports on messages is 'receivedDateTime ge|gt <DateTimeOffset>'.");
          }
          tok = { f: folder, from: -1, to: mb.changes.length, o: 0, s: q.$select ?? null, flt: q.$filter ?? null, g: mb.deltaGeneration, t: now };
        }

        const items = roundItems(mb, tok);
        const page = items.slice(tok.o, tok.o + pageSize);
        const immutable = prefersImmutable(req.headers.prefer);
        const select = parseSelect(tok.s ?? undefined, props);
        const value = page.map((it) =>
          it.kind === 'removed'
            ? { '@odata.type': '#microsoft.graph.message', id: immutable ? it.m.immutableId : renderId(it.m), '@removed': { reason: 'deleted' } }
            : { '@odata.type': '#microsoft.graph.message', ...pick(render(it.m, immutable), select.ok ? select.props : null) },
        );
        const body: Record<string, unknown> = { '@odata.context': `${self.origin}/v1.0/$metadata#Collection(message)`, value };
        if (tok.o + pageSize < items.length) {
          body['@odata.nextLink'] = `${initialUrl}?$skiptoken=${encode({ ...tok, o: tok.o + pageSize })}`;
        } else {
          body['@odata.deltaLink'] = `${initialUrl}?$deltatoken=${encode({ ...tok, from: tok.to, o: 0, g: mb.deltaGeneration, t: now })}`;
        }
        const r: EmulatorReply = { status: 200, body };
        return withPreference(r, immutable);
      }),
  );
}

type Item = { kind: 'item'; m: GraphStoredMessage } | { kind: 'removed'; m: GraphStoredMessage };

/** What a round shows: the folder's members (initial), or the net changes since `from`. */
function roundItems(mb: GraphMailbox, t: Token): Item[] {
  const after = mb.foldersAt(t.to);
  const since = t.flt ? receivedFilter(t.flt) : null;
  const passes = (m: GraphStoredMessage) => !since || since(m.receivedAt);
  const out: Item[] = [];
  if (t.from < 0) {
    for (const [id, f] of after) {
      const m = mb.byImmutableId(id)!;
      if (f === t.f && passes(m)) out.push({ kind: 'item', m });
    }
    return out.sort((a, b) => a.m.receivedAt - b.m.receivedAt || a.m.seq - b.m.seq);
  }
  const before = mb.foldersAt(t.from);
  const touched = new Set(mb.changes.slice(t.from, t.to).map((c) => c.immutableId));
  for (const id of touched) {
    const m = mb.byImmutableId(id)!;
    if (after.get(id) === t.f) {
      if (passes(m)) out.push({ kind: 'item', m });
    } else if (before.get(id) === t.f) {
      out.push({ kind: 'removed', m });
    }
  }
  return out;
}

function renderId(m: GraphStoredMessage): string {
  return render(m, false).id as string;
}

function expired(mb: GraphMailbox, location: string): EmulatorReply {
  const code = mb.deltaExpiryCode;
  const message =
    code === 'resyncRequired'
      ? 'Resync required. Replace any local items with the server items to avoid duplicates.'
      : 'The sync state generation was not found. It may have been evicted from the cache; start a new sync.';
  const r = graphError(410, code, message);
  return { ...r, headers: { ...r.headers, location } };
}

/** `receivedDateTime ge|gt <instant>`: the one delta $filter Graph takes on messages. */
function receivedFilter(f: string): ((receivedAt: number) => boolean) | null {
  const m = /^\s*receivedDateTime\s+(ge|gt)\s+(\d{4}-\d{2}-\d{2}T[0-9:.]+Z)\s*$/.exec(f);
  if (!m) return null;
  const at = Date.parse(m[2]!);
  if (!Number.isFinite(at)) return null;
  return m[1] === 'ge' ? (r) => r >= at : (r) => r > at;
}

function maxPageSize(prefer: string | string[] | undefined): number | null {
  for (const p of [prefer ?? []].flat()) {
    const m = /odata\.maxpagesize\s*=\s*(\d+)/i.exec(p);
    if (m) return Number(m[1]);
  }
  return null;
}

function encode(t: Token): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decode(s: string): Token | null {
  try {
    const t = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Token;
    return typeof t.f === 'string' && Number.isInteger(t.to) && Number.isInteger(t.o) ? t : null;
  } catch {
    return null;
  }
}

import { callApi, type ApiResult, type Parsed } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GraphContext } from './api.ts';
import { graphRetryAfter, parseGraphError } from './errors.ts';
import { odataQuery, readGraphMessage, type GraphMessage } from './message.ts';

/**
 * Delta query on one mail folder (api-reference/v1.0/api/message-delta.md,
 * concepts/delta-query-messages.md): the first call is `mailFolders/{folder}/messages/delta` with
 * its options ($select; $filter only `receivedDateTime ge|gt`); after that the caller follows the
 * `@odata.nextLink`s, then stores the `@odata.deltaLink`, and calls it next time for the changes
 * since. Graph encodes the options in the links, so a link is called as it is.
 *
 * `Prefer: odata.maxpagesize=N` asks for pages of N; `IdType="ImmutableId"` for ids that survive a
 * move between folders (concepts/outlook-immutable-id.md). An expired link is answered 410 Gone
 * (or a 4xx with code syncStateNotFound / resyncRequired): isDeltaExpired tells.
 */
export interface DeltaItem {
  id: string;
  /** An `@removed` entry: gone from the folder (deleted or moved out). */
  removed: boolean;
  message: GraphMessage | null;
}

export interface DeltaPage {
  items: DeltaItem[];
  nextLink: string | null;
  deltaLink: string | null;
}

export function deltaStartUrl(ctx: GraphContext, folder: string, opts: { select?: string[]; receivedSince?: number }): URL {
  const since = opts.receivedSince === undefined ? undefined : new Date(opts.receivedSince).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return new URL(
    `mailFolders/${encodeURIComponent(folder)}/messages/delta` +
      odataQuery({ $select: opts.select?.join(','), $filter: since === undefined ? undefined : `receivedDateTime ge ${since}` }),
    ctx.mailboxBase,
  );
}

export function deltaPage(
  ctx: GraphContext,
  input: { url: URL; pageSize?: number; immutableIds?: boolean },
  opts: { signal?: AbortSignal } = {},
): Promise<ApiResult<DeltaPage>> {
  const prefer = [
    ...(input.pageSize !== undefined ? [`odata.maxpagesize=${input.pageSize}`] : []),
    ...(input.immutableIds ? ['IdType="ImmutableId"'] : []),
  ].join(', ');
  return callApi(ctx, {
    method: 'GET',
    url: input.url,
    headers: prefer ? { prefer } : {},
    signal: opts.signal,
    parseOk: (_s, _h, b) => readDeltaPage(b),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

/** Codes with which Graph says a delta state is gone (concepts/errors.md; InvalidSyncStateData from client code). */
const expiredCodes = new Set(['syncstatenotfound', 'resyncrequired', 'syncstateinvalid', 'invalidsyncstatedata']);

export function isDeltaExpired(status: number, codes: string[]): boolean {
  return status === 410 || (status >= 400 && status < 500 && codes.some((c) => expiredCodes.has(c.toLowerCase())));
}

/** One page of a delta answer: items, then a nextLink or (on the last page) a deltaLink. */
export function readDeltaPage(b: Buffer): Parsed<DeltaPage> {
  const j = jsonBody(b) as { value?: unknown; '@odata.nextLink'?: unknown; '@odata.deltaLink'?: unknown } | undefined;
  if (!j || typeof j !== 'object' || !Array.isArray(j.value)) return { ok: false, reason: 'delta answer without a value array' };
  const items: DeltaItem[] = [];
  for (const v of j.value) {
    const o = v as { id?: unknown; '@removed'?: unknown } | null;
    if (!o || typeof o.id !== 'string' || o.id === '') return { ok: false, reason: 'delta answer: an item without an id' };
    items.push({ id: o.id, removed: o['@removed'] !== undefined, message: o['@removed'] !== undefined ? null : readGraphMessage(o) });
  }
  const next = typeof j['@odata.nextLink'] === 'string' ? j['@odata.nextLink'] : null;
  const delta = typeof j['@odata.deltaLink'] === 'string' ? j['@odata.deltaLink'] : null;
  if (next === null && delta === null) return { ok: false, reason: 'delta answer with neither a nextLink nor a deltaLink' };
  return { ok: true, value: { items, nextLink: next, deltaLink: delta } };
}

import { callApi, type ApiResult, type Parsed } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GraphContext } from './api.ts';
import { graphRetryAfter, parseGraphError } from './errors.ts';
import { odataQuery, readGraphMessage, type GraphMessage } from './message.ts';

/**
 * `GET messages` (the whole mailbox) or `GET mailFolders/{folder}/messages`, with OData $filter,
 * $select and $top: `{value:[…], "@odata.nextLink"?}`. With `immutableIds`, the request carries
 * `Prefer: IdType="ImmutableId"` so that ids survive the move from Drafts to Sent Items
 * (concepts/outlook-immutable-id.md).
 */
export interface ListInput {
  /** A well-known folder name ('sentitems', 'inbox') or a folder id; absent: the whole mailbox. */
  folder?: string;
  filter?: string;
  select?: string[];
  top?: number;
  immutableIds?: boolean;
}

export interface ListPage {
  messages: GraphMessage[];
  nextLink: string | null;
}

export function listMessages(ctx: GraphContext, input: ListInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<ListPage>> {
  const path = input.folder ? `mailFolders/${encodeURIComponent(input.folder)}/messages` : 'messages';
  const url = new URL(
    path +
      odataQuery({
        $filter: input.filter,
        $select: input.select?.join(','),
        $top: input.top === undefined ? undefined : String(input.top),
      }),
    ctx.mailboxBase,
  );
  return callApi(ctx, {
    method: 'GET',
    url,
    headers: input.immutableIds ? { prefer: 'IdType="ImmutableId"' } : {},
    signal: opts.signal,
    parseOk: (_s, _h, b) => readMessagePage(b),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

/**
 * The next page of a list: its `@odata.nextLink`, called as it is (Graph encodes the query and
 * the position in it). The caller checks that the link is Graph's own before calling it, since
 * the bearer token goes with it. The Prefer header is sent again: it is not part of the link.
 */
export function listNextPage(ctx: GraphContext, input: { url: URL; immutableIds?: boolean }, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<ListPage>> {
  return callApi(ctx, {
    method: 'GET',
    url: input.url,
    headers: input.immutableIds ? { prefer: 'IdType="ImmutableId"' } : {},
    signal: opts.signal,
    parseOk: (_s, _h, b) => readMessagePage(b),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

/** One page of a message list answer. */
export function readMessagePage(b: Buffer): Parsed<ListPage> {
  const j = jsonBody(b) as { value?: unknown; '@odata.nextLink'?: unknown } | undefined;
  if (!j || typeof j !== 'object' || !Array.isArray(j.value)) return { ok: false, reason: 'list answer without a value array' };
  const messages: GraphMessage[] = [];
  for (const v of j.value) {
    const m = readGraphMessage(v);
    if (!m) return { ok: false, reason: 'list answer: a message without an id' };
    messages.push(m);
  }
  const next = j['@odata.nextLink'];
  return { ok: true, value: { messages, nextLink: typeof next === 'string' ? next : null } };
}

import { callApi, type ApiResult } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GraphContext } from './api.ts';
import { graphRetryAfter, parseGraphError } from './errors.ts';
import { odataQuery, readGraphMessage, type GraphMessage } from './message.ts';

/** `GET messages/{id}?$select=…`; a regular id stops working when the item moves, an immutable one does not. */
export interface GetInput {
  id: string;
  select?: string[];
  immutableIds?: boolean;
}

export function getMessage(ctx: GraphContext, input: GetInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<GraphMessage>> {
  const url = new URL(`messages/${encodeURIComponent(input.id)}` + odataQuery({ $select: input.select?.join(',') }), ctx.mailboxBase);
  return callApi(ctx, {
    method: 'GET',
    url,
    headers: input.immutableIds ? { prefer: 'IdType="ImmutableId"' } : {},
    signal: opts.signal,
    parseOk: (_s, _h, b) => {
      const m = readGraphMessage(jsonBody(b));
      return m ? { ok: true, value: m } : { ok: false, reason: 'message answer without an id' };
    },
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

import { callApi, type ApiResult } from '../call.ts';
import type { GraphContext } from './api.ts';
import { graphRetryAfter, parseGraphError } from './errors.ts';
import { messageAnswer, odataQuery, type GraphMessage } from './message.ts';

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
    parseOk: messageAnswer('message'),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

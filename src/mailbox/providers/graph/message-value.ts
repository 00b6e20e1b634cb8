import { callApi, type ApiResult } from '../call.ts';
import type { GraphContext } from './api.ts';
import { graphRetryAfter, parseGraphError } from './errors.ts';

/** `GET messages/{id}/$value`: the message's MIME content (api-reference/v1.0/api/message-get.md). */
export function getMimeContent(ctx: GraphContext, input: { id: string; maxBytes?: number }, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<Buffer>> {
  return callApi(ctx, {
    method: 'GET',
    url: new URL(`messages/${encodeURIComponent(input.id)}/$value`, ctx.mailboxBase),
    signal: opts.signal,
    maxResponseBytes: input.maxBytes,
    parseOk: (_s, _h, b) => ({ ok: true, value: b }),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

import { callApi, type ApiResult } from '../call.ts';
import type { GraphContext } from './api.ts';
import { graphRetryAfter, parseGraphError } from './errors.ts';
import { messageAnswer, type GraphMessage } from './message.ts';

/**
 * message: update (api-reference/v1.0/api/message-update.md): `PATCH messages/{id}` with the
 * writable properties to change; 200 with the message. Cadenza writes `isRead` (read) and
 * `flag.flagStatus` ('flagged': the Outlook flag). Needs Mail.ReadWrite.
 */
export interface UpdateInput {
  id: string;
  isRead?: boolean;
  flagStatus?: 'notFlagged' | 'flagged' | 'complete';
  immutableIds?: boolean;
}

export function updateMessage(ctx: GraphContext, input: UpdateInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<GraphMessage>> {
  const body: Record<string, unknown> = {};
  if (input.isRead !== undefined) body.isRead = input.isRead;
  if (input.flagStatus !== undefined) body.flag = { flagStatus: input.flagStatus };
  return callApi(ctx, {
    method: 'PATCH',
    url: new URL(`messages/${encodeURIComponent(input.id)}`, ctx.mailboxBase),
    headers: { 'content-type': 'application/json', ...(input.immutableIds ? { prefer: 'IdType="ImmutableId"' } : {}) },
    body: Buffer.from(JSON.stringify(body), 'utf8'),
    signal: opts.signal,
    parseOk: messageAnswer('update'),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

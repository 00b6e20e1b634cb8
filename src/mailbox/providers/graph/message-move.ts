import { callApi, type ApiResult } from '../call.ts';
import type { GraphContext } from './api.ts';
import { graphRetryAfter, parseGraphError } from './errors.ts';
import { messageAnswer, type GraphMessage } from './message.ts';

/**
 * message: move (api-reference/v1.0/api/message-move.md): `POST messages/{id}/move` with
 * `{"destinationId": "<folder id or well-known name>"}`; 201 with the message in its new folder.
 * A regular id changes with the folder, an immutable one does not (concepts/outlook-immutable-id.md):
 * with immutableIds the answer's id is the same as the sync's key. Needs Mail.ReadWrite.
 */
export interface MoveInput {
  id: string;
  /** 'inbox', 'junkemail', … or a folder id. */
  destination: string;
  immutableIds?: boolean;
}

export function moveMessage(ctx: GraphContext, input: MoveInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<GraphMessage>> {
  return callApi(ctx, {
    method: 'POST',
    url: new URL(`messages/${encodeURIComponent(input.id)}/move`, ctx.mailboxBase),
    headers: { 'content-type': 'application/json', ...(input.immutableIds ? { prefer: 'IdType="ImmutableId"' } : {}) },
    body: Buffer.from(JSON.stringify({ destinationId: input.destination }), 'utf8'),
    signal: opts.signal,
    parseOk: messageAnswer('move'),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

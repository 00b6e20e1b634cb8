import { callApi, type ApiResult } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GmailContext } from './api.ts';
import { parseGmailError, gmailRetryAfter } from './errors.ts';
import { readMessage, type GmailMessage } from './message.ts';

/**
 * users.messages.get: `GET messages/{id}?format=minimal|metadata|raw|full&metadataHeaders=…`.
 * minimal gives ids, labels, internalDate and historyId; metadata adds the named headers; raw the
 * RFC 822 bytes (base64url).
 */
export interface GetInput {
  id: string;
  format?: 'minimal' | 'metadata' | 'raw' | 'full';
  metadataHeaders?: string[];
  /** An answer larger than this is a failure with tooLarge (format=raw: base64url JSON, 4/3 of the message). */
  maxBytes?: number;
}

export function getMessage(ctx: GmailContext, input: GetInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<GmailMessage>> {
  const url = new URL(`messages/${encodeURIComponent(input.id)}`, ctx.userBase);
  url.searchParams.set('format', input.format ?? 'minimal');
  for (const h of input.metadataHeaders ?? []) url.searchParams.append('metadataHeaders', h);
  return callApi(ctx, {
    method: 'GET',
    url,
    signal: opts.signal,
    maxResponseBytes: input.maxBytes,
    parseOk: (_s, _h, b) => readMessage(jsonBody(b)),
    parseError: parseGmailError,
    retryAfter: gmailRetryAfter,
  });
}

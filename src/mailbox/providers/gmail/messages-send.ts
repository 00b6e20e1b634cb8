import { callApi, type ApiResult } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GmailContext } from './api.ts';
import { parseGmailError, gmailRetryAfter } from './errors.ts';
import { readRef, type GmailMessageRef } from './message.ts';

/**
 * users.messages.send: `POST messages/send` with `{raw, threadId?}`, raw being the RFC 822 bytes in
 * base64url. Gmail files the message in SENT itself and answers `{id, threadId, labelIds}`.
 *
 * The JSON form carries about 5 MB (postalsys/emailengine's limit; Google documents 35 MB only for
 * the /upload form), which a sequence email never approaches; larger messages are refused before
 * sending by the transport rather than half-supported here.
 */
export const gmailJsonSendMaxRawBytes = 3_700_000; // base64 grows it by 4/3: about 5 MB on the wire

export interface SendInput {
  raw: Buffer;
  /** Files the message in this thread (Gmail also requires matching References and Subject). */
  threadId?: string | null;
}

export function sendMessage(ctx: GmailContext, input: SendInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<GmailMessageRef>> {
  const body: { raw: string; threadId?: string } = { raw: input.raw.toString('base64url') };
  if (input.threadId) body.threadId = input.threadId;
  return callApi(ctx, {
    method: 'POST',
    url: new URL('messages/send', ctx.userBase),
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: Buffer.from(JSON.stringify(body), 'utf8'),
    signal: opts.signal,
    parseOk: (_s, _h, b) => {
      const ref = readRef(jsonBody(b));
      return ref ? { ok: true, value: ref } : { ok: false, reason: 'send answer without id/threadId' };
    },
    parseError: parseGmailError,
    retryAfter: gmailRetryAfter,
  });
}

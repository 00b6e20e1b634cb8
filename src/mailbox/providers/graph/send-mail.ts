import { callApi, type ApiResult } from '../call.ts';
import type { GraphContext } from './api.ts';
import { graphRetryAfter, parseGraphError } from './errors.ts';

/**
 * user: sendMail with MIME content (api-reference/v1.0/api/user-sendmail.md): the body is the RFC
 * 822 message in base64 with `Content-Type: text/plain`. MIME rather than the JSON message so that
 * the bytes we composed, our Message-ID among them, are what goes out.
 *
 * The answer is 202 with an empty body, which only means a draft was saved: submission, the move to
 * Sent Items and delivery happen later (concepts/outlook-things-to-know-about-send-mail.md). The
 * caller confirms through the Sent copy.
 *
 * Graph takes requests up to 4 MB; larger messages need a draft and an upload session, which a
 * sequence email never needs, so the transport refuses them before sending.
 */
export const graphMimeSendMaxRawBytes = 2_900_000; // base64 grows it by 4/3: under 4 MB on the wire

export interface SendMailAccepted {
  status: number;
}

export function sendMail(ctx: GraphContext, input: { raw: Buffer }, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<SendMailAccepted>> {
  return callApi(ctx, {
    method: 'POST',
    url: new URL('sendMail', ctx.mailboxBase),
    headers: { 'content-type': 'text/plain' },
    body: Buffer.from(input.raw.toString('base64'), 'ascii'),
    signal: opts.signal,
    parseOk: (status) => ({ ok: true, value: { status } }),
    parseError: parseGraphError,
    retryAfter: graphRetryAfter,
  });
}

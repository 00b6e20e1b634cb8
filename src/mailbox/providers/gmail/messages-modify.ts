import { callApi, type ApiResult } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GmailContext } from './api.ts';
import { parseGmailError, gmailRetryAfter } from './errors.ts';
import { readMessage, type GmailMessage } from './message.ts';

/**
 * users.messages.modify: `POST messages/{id}/modify` with `{addLabelIds, removeLabelIds}`; the
 * answer is the message with its labels after the change. Folders are labels in Gmail: out of
 * spam into the inbox is +INBOX −SPAM, read is −UNREAD, starred and important are STARRED and
 * IMPORTANT. Needs the gmail.modify scope (or https://mail.google.com/), a restricted scope:
 * Google answers 403 insufficientPermissions to a grant without it. Adding a label the message
 * has, or removing one it lacks, changes nothing.
 */
export interface ModifyInput {
  id: string;
  add?: string[];
  remove?: string[];
}

export function modifyMessage(ctx: GmailContext, input: ModifyInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<GmailMessage>> {
  return callApi(ctx, {
    method: 'POST',
    url: new URL(`messages/${encodeURIComponent(input.id)}/modify`, ctx.userBase),
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: Buffer.from(JSON.stringify({ addLabelIds: input.add ?? [], removeLabelIds: input.remove ?? [] }), 'utf8'),
    signal: opts.signal,
    parseOk: (_s, _h, b) => readMessage(jsonBody(b)),
    parseError: parseGmailError,
    retryAfter: gmailRetryAfter,
  });
}

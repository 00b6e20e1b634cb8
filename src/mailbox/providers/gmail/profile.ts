import { callApi, type ApiResult, type Parsed } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GmailContext } from './api.ts';
import { parseGmailError, gmailRetryAfter } from './errors.ts';

/** users.getProfile: `GET profile` → `{emailAddress, messagesTotal, threadsTotal, historyId}`. */
export interface GmailProfile {
  emailAddress: string;
  /** The mailbox's current history id (a decimal string: it is a uint64). */
  historyId: string;
}

export function getProfile(ctx: GmailContext, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<GmailProfile>> {
  return callApi(ctx, {
    method: 'GET',
    url: new URL('profile', ctx.userBase),
    signal: opts.signal,
    parseOk: (_s, _h, b) => readProfile(b),
    parseError: parseGmailError,
    retryAfter: gmailRetryAfter,
  });
}

/** The answer of users.getProfile. */
export function readProfile(b: Buffer): Parsed<GmailProfile> {
  const j = jsonBody(b) as { emailAddress?: unknown; historyId?: unknown } | undefined;
  if (!j || typeof j !== 'object' || typeof j.historyId !== 'string' || !/^\d+$/.test(j.historyId)) {
    return { ok: false, reason: 'profile answer without a historyId' };
  }
  return { ok: true, value: { emailAddress: typeof j.emailAddress === 'string' ? j.emailAddress : '', historyId: j.historyId } };
}

import { callApi, type ApiResult } from '../call.ts';
import type { GmailContext } from './api.ts';
import { parseGmailError, gmailRetryAfter } from './errors.ts';

/** users.stop: `POST stop` ends the mailbox's push notifications ("within minutes", guides/push). */
export function stopWatch(ctx: GmailContext, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<null>> {
  return callApi(ctx, {
    method: 'POST',
    url: new URL('stop', ctx.userBase),
    signal: opts.signal,
    parseOk: () => ({ ok: true, value: null }),
    parseError: parseGmailError,
    retryAfter: gmailRetryAfter,
  });
}

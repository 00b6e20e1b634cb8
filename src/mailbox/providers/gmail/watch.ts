import { callApi, type ApiResult, type Parsed } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GmailContext } from './api.ts';
import { parseGmailError, gmailRetryAfter } from './errors.ts';

/**
 * users.watch: `POST watch {topicName, labelIds, labelFilterBehavior}` → `{historyId, expiration}`
 * (guides/push). Gmail then publishes `{emailAddress, historyId}` to the Cloud Pub/Sub topic
 * after changes; the watch lapses at `expiration` (7 days) unless called again (daily advised).
 */
export interface WatchInput {
  topicName: string;
  labelIds?: string[];
  labelFilterBehavior?: 'INCLUDE' | 'EXCLUDE';
}

export interface WatchAnswer {
  historyId: string;
  /** Epoch ms. */
  expiration: number;
}

export function watchMailbox(ctx: GmailContext, input: WatchInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<WatchAnswer>> {
  return callApi(ctx, {
    method: 'POST',
    url: new URL('watch', ctx.userBase),
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: Buffer.from(JSON.stringify(input), 'utf8'),
    signal: opts.signal,
    parseOk: (_s, _h, b) => readWatchAnswer(b),
    parseError: parseGmailError,
    retryAfter: gmailRetryAfter,
  });
}

/** The answer of users.watch. */
export function readWatchAnswer(b: Buffer): Parsed<WatchAnswer> {
  const j = jsonBody(b) as { historyId?: unknown; expiration?: unknown } | undefined;
  const exp = typeof j?.expiration === 'string' || typeof j?.expiration === 'number' ? Number(j.expiration) : NaN;
  if (!j || typeof j.historyId !== 'string' || !Number.isFinite(exp)) return { ok: false, reason: 'watch answer without historyId/expiration' };
  return { ok: true, value: { historyId: j.historyId, expiration: exp } };
}

import { callApi, type ApiResult, type Parsed } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GmailContext } from './api.ts';
import { parseGmailError, gmailRetryAfter } from './errors.ts';
import { readRef, type GmailMessageRef } from './message.ts';

/**
 * users.messages.list: `GET messages?q=…&labelIds=…&includeSpamTrash=…&maxResults=…&pageToken=…`.
 * Answers `{messages?: [{id, threadId}], nextPageToken?, resultSizeEstimate}`; `messages` is
 * absent, not empty, when nothing matches.
 */
export interface ListInput {
  q?: string;
  labelIds?: string[];
  includeSpamTrash?: boolean;
  maxResults?: number;
  pageToken?: string;
}

export interface ListPage {
  messages: GmailMessageRef[];
  nextPageToken: string | null;
  resultSizeEstimate: number | null;
}

export function listMessages(ctx: GmailContext, input: ListInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<ListPage>> {
  const url = new URL('messages', ctx.userBase);
  if (input.q !== undefined) url.searchParams.set('q', input.q);
  for (const l of input.labelIds ?? []) url.searchParams.append('labelIds', l);
  if (input.includeSpamTrash !== undefined) url.searchParams.set('includeSpamTrash', String(input.includeSpamTrash));
  if (input.maxResults !== undefined) url.searchParams.set('maxResults', String(input.maxResults));
  if (input.pageToken !== undefined) url.searchParams.set('pageToken', input.pageToken);
  return callApi(ctx, {
    method: 'GET',
    url,
    signal: opts.signal,
    parseOk: (_s, _h, b) => readListPage(b),
    parseError: parseGmailError,
    retryAfter: gmailRetryAfter,
  });
}

/** The answer of users.messages.list (exported for the fuzzer: a provider answer is untrusted input). */
export function readListPage(b: Buffer): Parsed<ListPage> {
  const j = jsonBody(b) as { messages?: unknown; nextPageToken?: unknown; resultSizeEstimate?: unknown } | undefined;
  if (!j || typeof j !== 'object') return { ok: false, reason: 'list answer is not a JSON object' };
  if (j.messages !== undefined && !Array.isArray(j.messages)) return { ok: false, reason: 'list answer: messages is not an array' };
  const messages: GmailMessageRef[] = [];
  for (const m of (j.messages as unknown[] | undefined) ?? []) {
    const ref = readRef(m);
    if (!ref) return { ok: false, reason: 'list answer: a message without id/threadId' };
    messages.push(ref);
  }
  return {
    ok: true,
    value: {
      messages,
      nextPageToken: typeof j.nextPageToken === 'string' && j.nextPageToken !== '' ? j.nextPageToken : null,
      resultSizeEstimate: typeof j.resultSizeEstimate === 'number' ? j.resultSizeEstimate : null,
    },
  };
}

import { callApi, type ApiResult } from '../call.ts';
import { jsonBody } from '../http.ts';
import type { GmailContext } from './api.ts';
import { parseGmailError, gmailRetryAfter } from './errors.ts';
import { readRef, type GmailMessageRef } from './message.ts';

/**
 * users.history.list: `GET history?startHistoryId=…&historyTypes=…&labelId=…&maxResults=…&pageToken=…`
 * → `{history?: [{id, messages, messagesAdded?: [{message}], …}], nextPageToken?, historyId}`
 * (guides/sync). A 404 means startHistoryId is older than the history Gmail keeps: the caller
 * must fall back to a full sync.
 */
export type HistoryType = 'messageAdded' | 'messageDeleted' | 'labelAdded' | 'labelRemoved';

export interface HistoryInput {
  startHistoryId: string;
  historyTypes?: HistoryType[];
  labelId?: string;
  maxResults?: number;
  pageToken?: string;
}

export interface HistoryAdded extends GmailMessageRef {
  /** The labels the record names; absent from some answers (then null: fetch to know). */
  labelIds: string[] | null;
}

export interface HistoryRecord {
  id: string;
  messagesAdded: HistoryAdded[];
}

export interface HistoryPage {
  history: HistoryRecord[];
  nextPageToken: string | null;
  /** The mailbox's current id: the cursor to store once the last page is processed. */
  historyId: string;
}

export function listHistory(ctx: GmailContext, input: HistoryInput, opts: { signal?: AbortSignal } = {}): Promise<ApiResult<HistoryPage>> {
  const url = new URL('history', ctx.userBase);
  url.searchParams.set('startHistoryId', input.startHistoryId);
  for (const t of input.historyTypes ?? []) url.searchParams.append('historyTypes', t);
  if (input.labelId !== undefined) url.searchParams.set('labelId', input.labelId);
  if (input.maxResults !== undefined) url.searchParams.set('maxResults', String(input.maxResults));
  if (input.pageToken !== undefined) url.searchParams.set('pageToken', input.pageToken);
  return callApi(ctx, {
    method: 'GET',
    url,
    signal: opts.signal,
    parseOk: (_s, _h, b) => readHistoryPage(jsonBody(b)),
    parseError: parseGmailError,
    retryAfter: gmailRetryAfter,
  });
}

export function readHistoryPage(v: unknown): { ok: true; value: HistoryPage } | { ok: false; reason: string } {
  const j = v as { history?: unknown; nextPageToken?: unknown; historyId?: unknown } | undefined;
  if (!j || typeof j !== 'object') return { ok: false, reason: 'history answer is not a JSON object' };
  if (typeof j.historyId !== 'string' || !/^\d+$/.test(j.historyId)) return { ok: false, reason: 'history answer without a historyId' };
  if (j.history !== undefined && !Array.isArray(j.history)) return { ok: false, reason: 'history answer: history is not an array' };
  const history: HistoryRecord[] = [];
  for (const r of (j.history as unknown[] | undefined) ?? []) {
    const rec = r as { id?: unknown; messagesAdded?: unknown } | null;
    if (!rec || typeof rec.id !== 'string') return { ok: false, reason: 'history record without an id' };
    const added: HistoryAdded[] = [];
    for (const a of Array.isArray(rec.messagesAdded) ? rec.messagesAdded : []) {
      const msg = (a as { message?: unknown } | null)?.message;
      const ref = readRef(msg);
      if (!ref) return { ok: false, reason: 'history record: messagesAdded without id/threadId' };
      const labels = (msg as { labelIds?: unknown }).labelIds;
      added.push({ ...ref, labelIds: Array.isArray(labels) ? labels.filter((l): l is string => typeof l === 'string') : null });
    }
    history.push({ id: rec.id, messagesAdded: added });
  }
  return {
    ok: true,
    value: { history, nextPageToken: typeof j.nextPageToken === 'string' && j.nextPageToken !== '' ? j.nextPageToken : null, historyId: j.historyId },
  };
}

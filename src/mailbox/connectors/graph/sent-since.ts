import type { Clock } from '../../../common/clock.ts';
import { cadenzaError } from '../../../common/errors.ts';
import { isServiceLink, type GraphApi } from '../../providers/graph/api.ts';
import type { ListPage } from '../../providers/graph/messages-list.ts';
import type { ApiResult } from '../../providers/call.ts';
import { withRetry, type RetryPolicy } from '../../sync/retry.ts';
import type { SentPage } from '../sent-pages.ts';

/**
 * A Microsoft 365 mailbox's Sent Items since an instant, a page at a time (Transport.sentSince,
 * for `cadenza reconcile-sent`): `GET mailFolders/sentitems/messages` with
 * `$filter=sentDateTime ge <instant>`, `$select` of what a copy needs and `$top=pageSize`, then
 * each `@odata.nextLink` as it is until an answer has none (api-reference/v1.0/api/user-list-messages.md,
 * concepts/paging.md). Ids are immutable (`Prefer: IdType="ImmutableId"`), as the rest of the
 * connector keys them.
 *
 * sentDateTime has whole seconds, so the filter starts at the second of `since`: a copy of that
 * second stays in, as the IMAP listing keeps it. Graph lists no In-Reply-To property (only
 * internetMessageHeaders, which Exchange fills for received mail), so `inReplyTo` is null.
 * A draft (isDraft) is a submission that has not finished: it is not in Sent Items, and if a
 * listing shows one anyway it is reported `pending` (handed over, not proven sent), as findSent
 * reports it.
 *
 * Each request is retried as the sync connectors retry theirs (mailbox/sync/retry.ts): 429 and 503
 * after their Retry-After (decimals allowed), other 5xx and network failures with backoff, bounded.
 * What cannot be retried throws, which ends the listing as `unavailable` (sent-pages.ts). A
 * nextLink to another host is refused: the bearer token would go with it.
 */
export interface GraphSentPagesOptions {
  clock: Clock;
  policy: RetryPolicy;
  /** $top: messages per page (Graph takes up to 1,000 for messages). */
  pageSize: number;
  signal?: AbortSignal;
}

const select = ['id', 'internetMessageId', 'sentDateTime', 'subject', 'toRecipients', 'isDraft'];

export async function* graphSentPages(api: GraphApi, since: number, o: GraphSentPagesOptions): AsyncGenerator<SentPage> {
  const from = Math.floor(since / 1000) * 1000;
  const instant = new Date(from).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const signal = o.signal ? { signal: o.signal } : {};
  const read = async (what: string, call: () => Promise<ApiResult<ListPage>>): Promise<ListPage> => {
    const r = await withRetry(o.clock, what, call, { policy: o.policy, ...signal });
    if (!r.ok) throw new Error('unreachable: withRetry returns only successes without `accept`');
    return r.value;
  };
  let page = await read('Graph Sent Items list', () =>
    api.list({ folder: 'sentitems', filter: `sentDateTime ge ${instant}`, select, top: o.pageSize, immutableIds: true }, signal),
  );
  for (;;) {
    const out: SentPage = { copies: [], withoutMessageId: 0 };
    for (const m of page.messages) {
      // The filter did it; a provider answer is still untrusted input.
      if (m.sentAt !== null && m.sentAt < from) continue;
      const messageId = m.internetMessageId?.trim();
      if (!messageId) {
        out.withoutMessageId++;
        continue;
      }
      out.copies.push({ messageId, sentAt: m.sentAt, to: m.to, subject: m.subject, inReplyTo: null, pending: m.isDraft === true });
    }
    yield out;
    const next = page.nextLink;
    if (next === null) return;
    if (!isServiceLink(api.serviceRoot, next)) {
      throw cadenzaError('MAILBOX_UNAVAILABLE', 'Graph Sent Items list: a nextLink to another host', { link: next.slice(0, 200) });
    }
    page = await read('Graph Sent Items list (next page)', () => api.listNext({ url: new URL(next), immutableIds: true }, signal));
  }
}

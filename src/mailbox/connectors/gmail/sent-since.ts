import addressparser from 'nodemailer/lib/addressparser/index.js';
import type { Clock } from '../../../common/clock.ts';
import type { ApiFailure } from '../../providers/call.ts';
import type { GmailApi } from '../../providers/gmail/api.ts';
import type { GmailMessage } from '../../providers/gmail/message.ts';
import { mapLimit } from '../../sync/map-limit.ts';
import { withRetry, type RetryPolicy } from '../../sync/retry.ts';
import type { SentFolderCopy } from '../outcomes.ts';
import type { SentPage } from '../sent-pages.ts';

/**
 * A Gmail mailbox's Sent folder since an instant, a page at a time (Transport.sentSince, for
 * `cadenza reconcile-sent`):
 *
 *   users.messages.list  labelIds=SENT, q=`after:<epoch seconds>`, includeSpamTrash (a rep who
 *                        deleted the copy still sent it; a trashed message keeps SENT),
 *                        maxResults=pageSize, then each nextPageToken until there is none;
 *   users.messages.get   format=metadata with the Message-ID, To, Subject and In-Reply-To headers,
 *                        for each listed id, `concurrency` at a time.
 *
 * Gmail reads an epoch-seconds `after:` as an instant (support.google.com/mail/answer/7190), and
 * whether "after" includes the second itself is not documented: the query starts a second early
 * and each copy is kept on its own internalDate (ms), `internalDate >= since`.
 *
 * Each request is retried as the sync connectors retry theirs (mailbox/sync/retry.ts): a 429 or a
 * 403 *RateLimitExceeded after its Retry-After, 5xx and network failures with backoff, bounded.
 * What cannot be retried throws (MAILBOX_UNAVAILABLE or MAILBOX_AUTH_FAILED), which ends the
 * listing as `unavailable` (sent-pages.ts). A message deleted between the list and the get (404)
 * is left out: it is no longer in the folder.
 */
export interface GmailSentPagesOptions {
  clock: Clock;
  policy: RetryPolicy;
  /** messages.list page size (Gmail's maximum is 500). */
  pageSize: number;
  /** messages.get calls in flight at once. */
  concurrency: number;
  signal?: AbortSignal;
}

/** The headers a copy is read from (Gmail matches metadataHeaders without regard to case). */
const headers = ['Message-ID', 'To', 'Subject', 'In-Reply-To'];

export async function* gmailSentPages(api: GmailApi, since: number, o: GmailSentPagesOptions): AsyncGenerator<SentPage> {
  const after = Math.floor(since / 1000) - 1;
  const signal = o.signal ? { signal: o.signal } : {};
  let pageToken: string | undefined;
  do {
    const list = await withRetry(
      o.clock,
      'Gmail messages.list (SENT)',
      () => api.list({ q: `after:${after}`, labelIds: ['SENT'], includeSpamTrash: true, maxResults: o.pageSize, ...(pageToken ? { pageToken } : {}) }, signal),
      { policy: o.policy, ...signal },
    );
    if (!list.ok) throw new Error('unreachable: withRetry returns only successes without `accept`');
    const got = await mapLimit(list.value.messages, o.concurrency, (ref) =>
      withRetry(o.clock, 'Gmail messages.get', () => api.get({ id: ref.id, format: 'metadata', metadataHeaders: headers }, signal), { policy: o.policy, ...signal, accept: isNotFound }),
    );
    const page: SentPage = { copies: [], withoutMessageId: 0 };
    for (const r of got) {
      if (!r.ok) continue; // deleted since the list
      const m = r.value;
      // A message that is no longer SENT (a list answer older than a label change) is not a send.
      if (!m.labelIds.includes('SENT')) continue;
      if (m.internalDate !== null && m.internalDate < since) continue;
      const copy = copyOf(m);
      if (copy) page.copies.push(copy);
      else page.withoutMessageId++;
    }
    // Lists come newest first; each page is handed over oldest first, as the sends went.
    page.copies.reverse();
    yield page;
    pageToken = list.value.nextPageToken ?? undefined;
  } while (pageToken);
}

/** The copy a metadata answer describes, or null when it carries no Message-ID. */
export function copyOf(m: GmailMessage): SentFolderCopy | null {
  const header = (name: string) => m.headers.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value.trim() || null;
  const messageId = header('Message-ID');
  if (!messageId) return null;
  return {
    messageId,
    sentAt: m.internalDate,
    to: addresses(header('To')),
    subject: header('Subject'),
    inReplyTo: header('In-Reply-To'),
    // Gmail files the copy as it accepts the message (SentProof 'provider_copy'): never pending.
    pending: false,
  };
}

/** The addresses of a To header ('"Ann" <ann@x.test>, bob@y.test'), groups flattened. */
function addresses(v: string | null): string[] {
  return v ? addressparser(v, { flatten: true }).map((a) => a.address).filter((a): a is string => !!a) : [];
}

function isNotFound(f: ApiFailure): boolean {
  return f.kind === 'http' && f.status === 404;
}

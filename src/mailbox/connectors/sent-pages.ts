import type { SentFolderCopy, SentPageHandler, SentSinceResult } from './outcomes.ts';

/**
 * One page of a Sent-folder listing as a provider's reader yields it (Transport.sentSince): the
 * copies with a Message-ID, and how many it left out for lacking one.
 */
export interface SentPage {
  copies: SentFolderCopy[];
  withoutMessageId: number;
}

/**
 * Hands the pages of a provider's Sent-folder reader to the caller's handler, one at a time: the
 * next page is read only once the handler is done with this one, so memory holds one page however
 * large the folder. The reader throws for anything the mailbox does (connection, grant, a rate
 * limit longer than it waits): that ends the listing as `unavailable`, with the copies handed over
 * so far. A handler that throws ends it with that error, after the reader is closed: it is the
 * caller's failure, not the mailbox's, and must not read as "could not list".
 */
export async function handSentPages(pages: AsyncIterable<SentPage>, onPage: SentPageHandler): Promise<SentSinceResult> {
  let copies = 0;
  let withoutMessageId = 0;
  const it = pages[Symbol.asyncIterator]();
  let done = false;
  try {
    for (;;) {
      let next: IteratorResult<SentPage>;
      try {
        next = await it.next();
      } catch (e) {
        done = true;
        return { status: 'unavailable', reason: reasonOf(e), copies };
      }
      if (next.done) {
        done = true;
        return { status: 'ok', copies, withoutMessageId };
      }
      withoutMessageId += next.value.withoutMessageId;
      if (next.value.copies.length === 0) continue;
      await onPage(next.value.copies);
      copies += next.value.copies.length;
    }
  } finally {
    // The handler threw: close the reader (its finally blocks release a folder lock, a connection).
    if (!done) await it.return?.(undefined).catch(() => undefined);
  }
}

function reasonOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

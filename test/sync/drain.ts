import type { MailboxSync, PullOptions, SyncBatch, SyncCursor } from '../../src/mailbox/sync/source.ts';

/**
 * What the ingestion worker does with a connector's pull, for connector tests: take every batch,
 * "commit" each batch's cursor in order, and optionally crash after `crashAfter` batches (the
 * batches after it are taken but never committed, so the next pull must yield them again).
 */
export async function drain(
  sync: MailboxSync,
  cursor: SyncCursor | null,
  opts: PullOptions & { crashAfter?: number } = {},
): Promise<{ batches: SyncBatch[]; committed: SyncCursor | null; keys: string[] }> {
  const batches: SyncBatch[] = [];
  let committed = cursor;
  for await (const b of sync.pull(cursor, opts)) {
    batches.push(b);
    if (opts.crashAfter !== undefined && batches.length > opts.crashAfter) break;
    committed = b.cursor;
  }
  const keys = batches.flatMap((b) => b.messages.map((m) => m.key));
  return { batches, committed, keys };
}

/** The Message-ID header of a fetched message's bytes. */
export function messageIdOf(raw: Uint8Array): string | null {
  const head = Buffer.from(raw).toString('latin1').split(/\r?\n\r?\n/)[0] ?? '';
  return /^message-id:\s*(\S+)/im.exec(head)?.[1] ?? null;
}

import type { MailboxSync, SyncBatch, WatchHandle } from '../../src/mailbox/sync/source.ts';

/**
 * What the benchmarks note about a mailbox's real connector as messages pass through it: the IDLE
 * push, each message a pull yields (and which pull: the full one on a new connection, or the one
 * a push asks for on the watch's own connection), and whether the watch is open. Timestamps are
 * performance.now(). Nothing else is changed: the wrapper hands every call on.
 */
export interface SyncObserver {
  pushed(user: string, at: number): void;
  pulled(messageId: string, at: number, via: PullKind): void;
  watching(user: string, open: boolean): void;
}

export type PullKind = 'full' | 'watch';

/** Reports nothing (for `observedSync(…, { watchPull: false })` alone). */
export const quietObserver: SyncObserver = { pushed() {}, pulled() {}, watching() {} };

/**
 * The connector as it is, with its push, pulls and watch state reported to `o`. `watchPull: false`
 * hides the watch's own pull, so that every push is pulled on a new connection as before issue 13
 * (the benchmarks' comparison in the same run).
 */
export function observedSync(user: string, c: MailboxSync, o: SyncObserver, options: { watchPull?: boolean } = {}): MailboxSync {
  const seen = async function* (batches: AsyncIterable<SyncBatch>, via: PullKind): AsyncIterable<SyncBatch> {
    for await (const batch of batches) {
      const now = performance.now();
      for (const m of batch.messages) {
        const id = messageIdOf(m.raw);
        if (id) o.pulled(id, now, via);
      }
      yield batch;
    }
  };
  return {
    pull: (cursor, options) => seen(c.pull(cursor, options), 'full'),
    ...(c.watch
      ? {
          async watch(changed, failed) {
            const h = await c.watch!(
              () => {
                o.pushed(user, performance.now());
                changed();
              },
              (e) => {
                o.watching(user, false);
                failed(e);
              },
            );
            o.watching(user, true);
            const handle: WatchHandle = {
              close: async () => {
                o.watching(user, false);
                await h.close();
              },
            };
            if (h.pull && options.watchPull !== false) handle.pull = (cursor, options) => seen(h.pull!(cursor, options), 'watch');
            return handle;
          },
        }
      : {}),
    close: () => c.close(),
  };
}

/** The Message-ID in a raw message's header (the benchmarks' own mail, so a plain match will do). */
export function messageIdOf(raw: Uint8Array): string | undefined {
  const head = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.length, 8192)).toString('latin1');
  return /^Message-ID:\s*(\S+)/im.exec(head)?.[1];
}

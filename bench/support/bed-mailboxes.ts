import { systemClock } from '../../src/common/clock.ts';
import { newId } from '../../src/common/ids.ts';
import { SyncPool, type SyncPoolOptions } from '../../src/ingest/worker/sync-pool.ts';
import type { Random } from '../../src/common/random.ts';
import type { Vault } from '../../src/mailbox/vault.ts';
import type { Store } from '../../src/store/store.ts';
import { bedEndpoint } from '../../test/mail/mailbed.ts';

/**
 * Connects bed users (password "pass", IMAP only: the sync role's part) as mailboxes of a new
 * workspace, their credentials sealed in the vault as `cadenza mailbox add` would; returns the
 * mailbox ids in the order of `users`. Rows go in set-based, 1,000 at a time, and the sealing runs
 * a few at once, so that 10,000 mailboxes take seconds.
 */
export async function connectBedMailboxes(store: Store, vault: Vault, random: Random, users: readonly string[], name = 'idle bench'): Promise<{ workspaceId: string; mailboxIds: string[] }> {
  const workspaceId = newId(Date.now(), random);
  await store.db.insertInto('workspace').values({ id: workspaceId, name, time_zone: 'UTC' }).execute();
  const settings = JSON.stringify({ imap: bedEndpoint('imap') });
  const mailboxIds = users.map(() => newId(Date.now(), random));
  for (let i = 0; i < users.length; i += 1000) {
    const rows = users.slice(i, i + 1000).map((email, j) => ({ id: mailboxIds[i + j]!, workspace_id: workspaceId, email, provider: 'smtp_imap' as const, settings, time_zone: 'UTC' }));
    await store.db.insertInto('mailbox').values(rows).execute();
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < users.length) {
        const k = next++;
        await vault.put(workspaceId, mailboxIds[k]!, { kind: 'password', username: users[k]!, password: 'pass' });
      }
    }),
  );
  return { workspaceId, mailboxIds };
}

/**
 * The sync role as the benchmarks run it on bed mailboxes: the system clock, and first pulls that
 * look back 1 minute (earlier runs' mail in these mailboxes is not this run's business).
 */
export function benchSyncPool(o: Omit<SyncPoolOptions, 'clock'>): SyncPool {
  return new SyncPool({ clock: systemClock, resyncWindowMs: 60_000, ...o });
}

/** Mailboxes of this database with a stored cursor: watched (the loop opens its watch first) and pulled once. */
export async function watchedCount(store: Store): Promise<number> {
  return Number((await store.db.selectFrom('mailbox_sync').select((eb) => eb.fn.countAll<number>().as('c')).where('cursor', 'is not', null).executeTakeFirstOrThrow()).c);
}

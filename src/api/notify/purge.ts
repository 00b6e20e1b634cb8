import type { Clock } from '../../common/clock.ts';
import type { Store } from '../../store/store.ts';
import { purgeBefore } from './sql/purge.ts';

/**
 * How long notifications are kept (issue 19), a periodic duty of the API role (duty.ts, every 6
 * hours): a notification that was read goes 30 days after it was read; every event goes 90 days
 * after it was handed out, and with it its notifications, read or not, and its Slack posts
 * (delivered, failed or still waiting). An event not yet handed out is kept. The event's source
 * key goes with it: the facts it names (a reply, a task, a change of a mailbox's or a domain's
 * health) are recorded once when they happen and are not recorded again.
 */
export const READ_RETENTION_DAYS = 30;
export const RETENTION_DAYS = 90;
export const NOTIFICATION_PURGE_EVERY_MS = 6 * 3_600_000;
const DAY_MS = 86_400_000;

export async function purgeNotifications(d: { store: Store; clock: Clock; batch?: number }): Promise<{ read: number; events: number }> {
  const limit = d.batch ?? 1000;
  const now = d.clock.now();
  const out = { read: 0, events: 0 };
  for (let n = limit; n === limit; out.read += n) n = await purgeBefore(d.store.db, 'notification', new Date(now - READ_RETENTION_DAYS * DAY_MS), limit);
  for (let n = limit; n === limit; out.events += n) n = await purgeBefore(d.store.db, 'notification_event', new Date(now - RETENTION_DAYS * DAY_MS), limit);
  return out;
}

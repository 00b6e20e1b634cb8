import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { seedMember, seedWorkspace } from '../../../test/api.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { seededRandom } from '../../common/random.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { startNotificationDuties } from './duty.ts';
import { fanOut } from './fanout.ts';
import { NOTIFICATION_PURGE_EVERY_MS, purgeNotifications } from './purge.ts';
import { markRead } from './sql/bell.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 5, 8);

/**
 * Notifications' retention on a simulated clock: a read notification goes 30 days after it was
 * read, an event 90 days after it was handed out, with its notifications (read or not) and Slack
 * posts; an event not yet handed out stays. The API role's duty runs the purge every 6 hours.
 */
describe.each(testBackends())('notification retention (%s)', (backend) => {
  let store: TestStore;
  let ws: string;
  let rep: string;
  let seq = 0;
  beforeAll(async () => {
    store = await freshStore(backend);
    const w = await seedWorkspace(store, `Retention ${backend}`, `owner-${backend}@retention.test`);
    ws = w.workspaceId;
    rep = (await seedMember(store, ws, `rep-${backend}@retention.test`, 'member')).userId;
  }, 120_000);
  afterAll(async () => {
    await store?.destroy();
  });

  /** An event of the rep's at the clock's time, handed out (the rep's notification) when `handOut`. */
  const event = async (clock: SimClock, handOut = true) => {
    const r = await store.db
      .insertInto('notification_event')
      .values({ workspace_id: ws, source_key: `retention:${++seq}`, kind: 'task_due', user_id: rep, title: `Task ${seq}`, body: 'Call them', link: '/tasks', occurred_at: new Date(clock.now()) })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (handOut) expect(await fanOut({ store, clock })).toBe(1);
    return Number(r.id);
  };
  const notificationOf = async (eventId: number) => (await store.db.selectFrom('notification').select(['id']).where('event_id', '=', eventId).where('user_id', '=', rep).executeTakeFirst())?.id;
  const left = async (ids: number[]) => {
    const events = await store.db.selectFrom('notification_event').select('id').where('id', 'in', ids).execute();
    const notes = await store.db.selectFrom('notification').select('event_id').where('event_id', 'in', ids).execute();
    const posts = await store.db.selectFrom('notification_slack').select('event_id').where('event_id', 'in', ids).execute();
    return { events: events.map((e) => Number(e.id)).sort(), notifications: [...new Set(notes.map((n) => Number(n.event_id)))].sort(), slack: posts.map((p) => Number(p.event_id)).sort() };
  };

  it('keeps a read notification 30 days after it was read and every event 90 days after it was handed out', async () => {
    const clock = new SimClock(T0);
    const unread = await event(clock);
    const read = await event(clock);
    // A Slack post of the unread one, delivered long ago: it goes with its event.
    await store.db.insertInto('notification_slack').values({ workspace_id: ws, user_id: rep, event_id: unread, state: 'delivered', attempts: 1, next_attempt_at: new Date(T0), delivered_at: new Date(T0) }).execute();
    clock.advance(DAY);
    expect(await markRead(store.db, ws, rep, [(await notificationOf(read))!], new Date(clock.now()))).toBe(1);
    const purge = () => purgeNotifications({ store, clock, batch: 2 });

    // 30 days after the read, to the hour: not yet; a minute later it goes, its event stays.
    clock.advance(30 * DAY - 60_000);
    expect(await purge()).toEqual({ read: 0, events: 0 });
    clock.advance(2 * 60_000);
    expect(await purge()).toEqual({ read: 1, events: 0 });
    expect(await left([unread, read])).toEqual({ events: [unread, read].sort(), notifications: [unread], slack: [unread] });

    // An event handed out then, and one recorded but not yet handed out.
    const later = await event(clock);
    const waiting = await event(clock, false);
    // 90 days after the first hand-out: both first events go, with the unread notification and the Slack post.
    clock.advanceTo(T0 + 90 * DAY - 60_000);
    expect(await purge()).toEqual({ read: 0, events: 0 });
    clock.advanceTo(T0 + 90 * DAY + 60_000);
    expect(await purge()).toEqual({ read: 0, events: 2 });
    expect(await left([unread, read, waiting, later])).toEqual({ events: [waiting, later].sort(), notifications: [later], slack: [] });
    // Running again at once finds nothing more.
    expect(await purge()).toEqual({ read: 0, events: 0 });
  });

  it('purges in batches: more rows than a batch all go in one pass', async () => {
    const clock = new SimClock(T0 + 200 * DAY);
    await store.db.deleteFrom('notification_event').where('workspace_id', '=', ws).execute();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await event(clock));
    clock.advance(91 * DAY);
    expect(await purgeNotifications({ store, clock, batch: 2 })).toEqual({ read: 0, events: 5 });
    expect(await left(ids)).toEqual({ events: [], notifications: [], slack: [] });
  });

  it("runs as the API role's duty every 6 hours", async () => {
    const clock = new SimClock(T0 + 400 * DAY);
    const read = await event(clock);
    expect(await markRead(store.db, ws, rep, [(await notificationOf(read))!], new Date(clock.now()))).toBe(1);
    const logs: string[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (c: Buffer, _e, cb) => (logs.push(c.toString()), cb()) }));
    const start = clock.now();
    // The fast duty (fan-out, Slack) is pushed out of the way: only the purge's timer is left to fire.
    const duties = startNotificationDuties({ store, clock, random: seededRandom('retention'), sealer: new Vault(store, localKeyWrapper(randomBytes(32))), log, allowPrivate: false, everyMs: 10_000 * DAY });
    try {
      const ranAt = async (at: number) => vi.waitFor(() => expect(clock.nextTimerAt()).toBe(at + NOTIFICATION_PURGE_EVERY_MS), { timeout: 10_000, interval: 20 });
      await ranAt(start);
      /** Fires the purge's timers one by one (each pass runs at its timer's time) until `until`. */
      const runUntil = async (until: number) => {
        while (clock.nextTimerAt()! <= until) {
          const at = clock.nextTimerAt()!;
          clock.advanceTo(at);
          await ranAt(at);
        }
      };
      // 29 days on (116 passes): the read notification is kept.
      await runUntil(start + 29 * DAY);
      expect(clock.now()).toBe(start + 29 * DAY);
      expect((await left([read])).notifications).toEqual([read]);
      expect(logs.some((l) => l.includes('past their retention'))).toBe(false);
      // The first pass past 30 days removes it and says so.
      await runUntil(start + 30 * DAY + 6 * HOUR);
      expect(await left([read])).toEqual({ events: [read], notifications: [], slack: [] });
      expect(logs.some((l) => l.includes('notifications past their retention purged') && l.includes('"read":1'))).toBe(true);
    } finally {
      await duties.stop();
    }
  });
});

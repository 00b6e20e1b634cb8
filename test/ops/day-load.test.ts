import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../stores.ts';
import { runDayLoad } from './day-load.ts';

/**
 * The short form of the day's load test (`npm run bench -- day-load`, 10,000 mailboxes): 100
 * Gmail mailboxes and 600 sends over a working day on the accelerated clock, replies through the
 * day and a storm at 13:00. Every send once, no follow-up after a reply, every reply stopped.
 */
let store: TestStore;
beforeAll(async () => {
  store = await freshStore(testBackends().includes('postgres') ? 'postgres' : 'pglite');
}, 60_000);
afterAll(async () => store?.destroy());

it('a day of 100 mailboxes: every send once, no follow-up after a reply, every reply stopped (p99 within 5 s, storm replies within 15 s)', async () => {
  const r = await runDayLoad({ store, mailboxes: 100, sends: 600, rate: 1200, replyShare: 0.1, storm: 10 });
  console.log(`day load (short): ${JSON.stringify(r)}`);
  // A replied lead gets at most its first email; the pacing may leave a few last emails for the next morning.
  expect(r.sent).toBeGreaterThan(0.8 * (r.sendsPlanned - 2 * r.replies));
  expect(r.unsettled).toBe(0);
  expect(r.duplicates).toBe(0);
  expect(r.followUpsAfterReply).toBe(0);
  // One already on its way when the reply landed may arrive just after it; none a second later.
  expect(r.sentAfterReplyMs.filter((ms) => ms >= 1000)).toEqual([]);
  expect(r.repliesStopped).toBe(r.replies);
  expect(r.replyToStop.p99).toBeLessThan(5_000);
  expect(r.stormReplies).toBe(10);
  expect(r.stormReplyToStop.p99).toBeLessThan(15_000);
}, 300_000);

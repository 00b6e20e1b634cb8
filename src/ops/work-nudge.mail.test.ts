import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeMailBed } from '../../test/mail/describe-mail-bed.ts';
import { resetMailBed } from '../../test/mail/mailbed.ts';
import { launchFirstSend } from '../../test/launch-first-send.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';

/**
 * Launch → first send: enrolling over the API wakes the scheduler and the dispatcher (work nudges),
 * so the first email leaves within seconds instead of after their 30 s polls (up to ~55 s before).
 */
const REP = 'sync16@inbox.test';
const PROSPECT = 'sync17@inbox.test';
const LIMIT_MS = 10_000;
/**
 * A mailbox connected moments before the launch: no sender or sync loop holds it yet. The
 * 'mailboxes' nudge of the connect call starts both at once; without it the first send and the
 * first read of its replies wait for the pools' next balance (every 20 s).
 */
const JUST_CONNECTED_MS = 5_000;

describeMailBed('launch → first send', () => {
  beforeAll(() => resetMailBed([REP, PROSPECT]), 60_000);

  it('one process, every role: the email is in the prospect’s INBOX within 10 s', async () => {
    const f = await launchFirstSend({ rep: REP, prospect: PROSPECT, password: 'pass' });
    expect(f.deliveredMs, JSON.stringify(f)).toBeLessThan(LIMIT_MS);
  }, 180_000);

  it('a mailbox connected just before the launch: the email within 5 s, and the reply to it read within 5 s', async () => {
    const f = await launchFirstSend({ rep: REP, prospect: PROSPECT, password: 'pass', justConnected: true, reply: true });
    expect(f.deliveredMs, JSON.stringify(f)).toBeLessThan(JUST_CONNECTED_MS);
    expect(f.replyIngestedMs, JSON.stringify(f)).toBeLessThan(JUST_CONNECTED_MS);
  }, 180_000);

  it('resuming a paused mailbox plans its parked send at once: in the INBOX within 5 s of the resume', async () => {
    const f = await launchFirstSend({ rep: REP, prospect: PROSPECT, password: 'pass', resumeLaunch: true });
    expect(f.deliveredMs, JSON.stringify(f)).toBeLessThan(JUST_CONNECTED_MS);
  }, 180_000);

  describe.skipIf(!testBackends().includes('postgres'))('on PostgreSQL, the API in one app and the scheduler, sender and sync roles in another', () => {
    // Each launch is a fresh installation (setup runs once per database).
    let stores: TestStore[] = [];
    const database = async () => {
      const s = await freshStore('postgres');
      stores.push(s);
      return s.url!;
    };
    afterEach(async () => {
      await Promise.all(stores.map((s) => s.destroy()));
      stores = [];
    });

    it('the nudge crosses over LISTEN/NOTIFY: delivered within 10 s', async () => {
      const f = await launchFirstSend({ databaseUrl: await database(), split: true, rep: REP, prospect: PROSPECT, password: 'pass' });
      expect(f.deliveredMs, JSON.stringify(f)).toBeLessThan(LIMIT_MS);
    }, 180_000);

    it('`cadenza enroll` in a process of its own: its NOTIFY wakes the running workers; delivered within 10 s of starting the command', async () => {
      const f = await launchFirstSend({ databaseUrl: await database(), split: true, viaCli: true, rep: REP, prospect: PROSPECT, password: 'pass' });
      expect(f.deliveredMs, JSON.stringify(f)).toBeLessThan(LIMIT_MS);
    }, 180_000);

    it('a mailbox connected just before the launch: the workers take it at the nudge; email and reply within 5 s', async () => {
      const f = await launchFirstSend({ databaseUrl: await database(), split: true, rep: REP, prospect: PROSPECT, password: 'pass', justConnected: true, reply: true });
      expect(f.deliveredMs, JSON.stringify(f)).toBeLessThan(JUST_CONNECTED_MS);
      expect(f.replyIngestedMs, JSON.stringify(f)).toBeLessThan(JUST_CONNECTED_MS);
    }, 180_000);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describeMailBed('launch → first send', () => {
  beforeAll(() => resetMailBed([REP, PROSPECT]), 60_000);

  it('one process, every role: the email is in the prospect’s INBOX within 10 s', async () => {
    const f = await launchFirstSend({ rep: REP, prospect: PROSPECT, password: 'pass' });
    expect(f.deliveredMs, JSON.stringify(f)).toBeLessThan(LIMIT_MS);
  }, 180_000);

  describe.skipIf(!testBackends().includes('postgres'))('on PostgreSQL, the API in one app and the scheduler and sender in another', () => {
    let store: TestStore;
    beforeAll(async () => {
      store = await freshStore('postgres');
    });
    afterAll(() => store?.destroy());

    it('the nudge crosses over LISTEN/NOTIFY: delivered within 10 s', async () => {
      const f = await launchFirstSend({ databaseUrl: store.url!, split: true, rep: REP, prospect: PROSPECT, password: 'pass' });
      expect(f.deliveredMs, JSON.stringify(f)).toBeLessThan(LIMIT_MS);
    }, 180_000);
  });
});

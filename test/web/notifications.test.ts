import { describe, expect, it } from 'vitest';
import { seedGraph } from '../api.ts';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { goneReason } from '../../src/api/notify/slack.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * Issue 19, notifications in headless Chromium against the real app: a task falls due and a reply
 * read as interested arrives (stored as the sync role stores them; 0099's triggers record the
 * events, the API's duty hands them out); the bell shows the unread count and both, the browser
 * (its notification permission granted in the context) shows them as notifications, following one
 * marks it read and opens its screen; the member's choices in Settings are saved. Screenshots and
 * axe at 1440×900 and 390×844.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'bell@cadenza.test', password: 'a long enough password', workspace: 'Ringers' };

describe.skipIf(skip !== null)(`notifications in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-notify', roles: ['api'], appOptions: () => ({ notifications: { everyMs: 300 } }) });

  it('a positive reply arrives: the bell shows it, the browser notifies, choices are saved', async () => {
    const { app, errors } = web;
    const db = app.store.db;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 }, permissions: ['notifications'] });
    // The browser's notifications, as the page makes them (the real constructor still runs).
    await page.addInitScript(() => {
      const Real = window.Notification;
      const shown: Array<{ title: string; body: string | undefined }> = [];
      (window as unknown as { shownNotifications: typeof shown }).shownNotifications = shown;
      class Spy extends Real {
        constructor(title: string, options?: NotificationOptions) {
          shown.push({ title, body: options?.body });
          super(title, options);
        }
      }
      Object.defineProperty(Spy, 'permission', { get: () => Real.permission });
      window.Notification = Spy as typeof Notification;
    });
    await web.setupOwner(page, OWNER);
    const found: string[] = [];
    const bell = page.getByTestId('bell');
    await bell.waitFor();
    expect(await page.evaluate(() => Notification.permission)).toBe('granted');

    const ws = await db.selectFrom('workspace').select('id').where('name', '=', OWNER.workspace).executeTakeFirstOrThrow();
    const owner = await db.selectFrom('app_user').select('id').where('workspace_id', '=', ws.id).executeTakeFirstOrThrow();
    // A mailbox of the owner's, a lead in a sequence whose call task is due now.
    const g = await seedGraph(app.store, ws.id, 'bell', owner.id);
    // The lead answers, and the classifier reads it as interested.
    await db
      .insertInto('message')
      .values({ id: newId(Date.now(), seededRandom('web-notify')), workspace_id: ws.id, mailbox_id: g.mailboxId!, enrollment_id: g.enrollmentId!, direction: 'inbound', message_id: '<yes-please@prospects.test>', subject: 'Re: Hi — yes, let us talk Tuesday', at: new Date(), intent: 'interested', intent_confidence: 0.93, folder: 'inbox', label: 'human_reply' })
      .execute();

    await bell.filter({ hasText: '2' }).waitFor({ timeout: 20_000 });
    expect(await bell.getAttribute('aria-expanded')).toBe('false');
    await expect.poll(() => page.evaluate(() => (window as unknown as { shownNotifications: Array<{ title: string; body?: string }> }).shownNotifications)).toEqual(
      expect.arrayContaining([{ title: 'Interested reply from Lead bell', body: 'Re: Hi — yes, let us talk Tuesday' }, { title: 'Call due: lead-bell@prospects.test', body: 'Call them' }]),
    );
    await screenshot(page, 'notify-01-count');

    await bell.click();
    const panel = page.getByRole('region', { name: 'Notifications' });
    const reply = panel.getByRole('link', { name: /Interested reply from Lead bell/ });
    await reply.waitFor();
    await panel.getByRole('link', { name: /Call due: lead-bell@prospects.test/ }).waitFor();
    await atBothWidths(page, 'notify', '02-bell-open', found);

    // Following the reply opens the inbox and marks it read.
    await reply.click();
    await page.waitForURL(/\/inbox$/);
    await bell.filter({ hasText: '1' }).waitFor();
    expect(await page.evaluate(() => (window as unknown as { shownNotifications: unknown[] }).shownNotifications.length)).toBe(2);

    // The member's choices: interested replies by email digest too, every 4 hours.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings', exact: true }).click();
    const section = page.getByTestId('notification-settings');
    await section.getByRole('checkbox', { name: 'A prospect replies with interest or asks to meet: Email digest' }).check();
    await section.getByLabel('Email digest', { exact: true }).selectOption('4');
    await section.getByRole('button', { name: 'Save notification choices' }).click();
    await section.getByText('Notification choices saved.').waitFor();
    const pref = await db.selectFrom('notification_preference').selectAll().where('user_id', '=', owner.id).execute();
    expect(pref.find((p) => p.kind === 'reply_positive')).toEqual({ workspace_id: ws.id, user_id: owner.id, kind: 'reply_positive', in_app: true, browser: true, email: true, slack: false });
    expect((await db.selectFrom('notification_setting').select('digest_every_hours').where('user_id', '=', owner.id).executeTakeFirstOrThrow()).digest_every_hours).toBe(4);
    await section.scrollIntoViewIfNeeded();
    await atBothWidths(page, 'notify', '03-settings', found);

    // The member's Slack webhook answered 410 (slack.ts disabled it): the section says so, in words.
    const reason = goneReason(410, Date.now());
    await db.updateTable('notification_setting').set({ slack_url_sealed: Buffer.from('sealed'), slack_host: 'hooks.example.test', slack_disabled_at: new Date(), slack_disabled_reason: reason }).where('user_id', '=', owner.id).execute();
    await page.reload();
    await section.getByRole('status').filter({ hasText: reason }).waitFor();
    await section.getByText('Saved, posting to hooks.example.test.', { exact: false }).waitFor();
    await section.getByRole('status').filter({ hasText: reason }).scrollIntoViewIfNeeded();
    await atBothWidths(page, 'notify', '04-slack-disabled', found);

    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
});

import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseMail } from '../../src/ingest/parse/parse-mail.ts';
import { describeMailBed } from '../mail/describe-mail-bed.ts';
import { bedMailboxBody, countByMessageId, mailBed, readInbox } from '../mail/mailbed.ts';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { atBothWidths, expectNoSidewaysScroll } from './viewports.ts';
import { webSuite } from './harness.ts';

/**
 * The inbox's reply box in headless Chromium, against the real app (API, sync and sender roles) and the
 * real Postfix + Dovecot: sync22 writes to the rep's mailbox sync23 with a Reply-To; sync ingests
 * it; the rep opens it in the unified inbox and answers with the keyboard only (j to select, r to
 * reply, typing, Ctrl+Enter twice as an impatient person would); the answer lands once in sync22's
 * INBOX, at the Reply-To address, threaded (In-Reply-To, References). Screenshots in
 * test-results/screens/inbox-reply-*.png.
 */
const REP = 'sync23@inbox.test';
const PROSPECT = 'sync22@inbox.test';
/** +tags deliver to sync22's INBOX: the answer must go here, not to From. */
const REPLY_TO = 'sync22+desk@inbox.test';
const BED_PASS = 'pass';
const OWNER = { name: 'Robin Rep', email: 'robin-reply@cadenza.test', password: 'a long enough password' };

const skip = chromiumSkipReason();

/** A signed-in API caller from Node (cookie + CSRF), for what the test sets up around the browser. */
async function apiSession(base: string, setupToken: string) {
  const setup = await fetch(`${base}/api/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...OWNER, setupToken, workspaceName: 'Reply Desk', timeZone: 'UTC' }) });
  if (!setup.ok) throw new Error(`setup: ${setup.status} ${await setup.text()}`);
  const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: OWNER.email, password: OWNER.password }) });
  if (!login.ok) throw new Error(`login: ${login.status} ${await login.text()}`);
  const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const me = (await login.json()) as { csrfToken: string; workspaces?: { id: string }[] };
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const r = await fetch(`${base}${path}`, { method, headers: { cookie, 'x-csrf-token': me.csrfToken, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return (await r.json()) as T;
  };
  return call;
}

describeMailBed('inbox reply box in Chromium', () => {
  describe.skipIf(skip !== null)(`keyboard-only reply from the unified inbox${skip ? ` (skipped: ${skip})` : ''}`, () => {
    // The reply is sent by the sender role (sending/credential-tasks/): without one the API answers 503.
    const web = webSuite({ prefix: 'reply', roles: ['api', 'sync', 'sender'], startTimeout: 180_000 });
    const { errors: pageErrors } = web;
    let page: Page;
    beforeAll(async () => {
      page = await web.newPage();
    });

    it('opens the inbox, answers a message from sync22 with the keyboard only, and it arrives once, threaded, at the Reply-To', async () => {
      const { app } = web;
      const tag = `r${randomBytes(4).toString('hex')}`;
      const call = await apiSession(app.url!, app.setupToken!.token);
      const { workspaces } = await call<{ workspaces: { id: string }[] }>('GET', '/api/auth/me');
      const workspaceId = workspaces[0]!.id;
      await call('POST', `/api/workspaces/${workspaceId}/mailboxes`, { ...bedMailboxBody(REP, BED_PASS), displayName: OWNER.name });

      // The prospect writes, continuing an earlier conversation, and asks for answers at another address.
      const earlier = `<earlier-${tag}@inbox.test>`;
      const inbound = `<question-${tag}@inbox.test>`;
      const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
      await smtp.sendMail({
        from: `Sam Prospect <${PROSPECT}>`,
        replyTo: REPLY_TO,
        to: REP,
        subject: `Pricing question ${tag}`,
        messageId: inbound,
        inReplyTo: earlier,
        references: [earlier],
        text: 'Hi Robin,\n\nWhat would 40 seats cost per year?\n\nSam',
      });
      smtp.close();

      await page.goto(app.url!);
      await web.signIn(page, OWNER);
      // Sync picks the message up and the inbox shows it (it refreshes every 5 s).
      const shownFrom = Date.now();
      const item = page.locator('ul[aria-label="Messages"] > li').filter({ hasText: `Pricing question ${tag}` });
      await item.waitFor({ timeout: 90_000 }).catch(async (e: Error) => {
        // Say where it stopped: not fetched by sync, or stored and not shown.
        const rows = await app.store.db.selectFrom('message').select(['direction', 'subject', 'folder', 'label', 'action']).execute();
        const sync = await app.store.db.selectFrom('mailbox_sync').select(['updated_at', 'last_error']).execute();
        throw new Error(`${e.message}\nmessages: ${JSON.stringify(rows)}\nsync: ${JSON.stringify(sync)}`);
      });
      console.log(`inbox-reply: message shown in the inbox ${Date.now() - shownFrom} ms after sign-in`);
      const found: string[] = [];
      await atBothWidths(page, 'inbox-reply', '01-inbox', found);

      // From here on, only the keyboard: j selects messages (newest first) until ours has focus.
      await page.locator('body').focus();
      const ourId = await item.getAttribute('data-message-id');
      expect(ourId).toBeTruthy();
      for (let i = 0; i < 20; i++) {
        await page.keyboard.press('j');
        if ((await page.evaluate(() => document.activeElement?.getAttribute('data-message-id'))) === ourId) break;
      }
      expect(await page.evaluate(() => document.activeElement?.getAttribute('data-message-id'))).toBe(ourId);
      await page.keyboard.press('r');
      // The reply box is in the conversation beside the list.
      const conv = page.getByRole('region', { name: 'Conversation' });
      const box = conv.getByRole('textbox', { name: /Your reply to/ });
      await expect.poll(() => box.evaluate((el) => el === document.activeElement)).toBe(true);
      await conv.getByText(`To ${REPLY_TO} (the Reply-To of ${PROSPECT})`, { exact: false }).waitFor();
      await page.keyboard.type(`Hi Sam,`);
      await page.keyboard.press('Enter');
      await page.keyboard.press('Enter');
      await page.keyboard.type(`40 seats are 4,800 a year (${tag}).`);
      await page.keyboard.press('Enter');
      await page.keyboard.type('Robin');
      // The reply box at a desktop's width, then on a phone: there the list has the screen until the
      // message is opened, and the reply typed so far is still in its box. Then back to it.
      found.push(...(await blockingViolations(page, 'reply typed at 1440×900')));
      await screenshot(page, 'inbox-reply-02-typed-1440');
      await page.setViewportSize({ width: 390, height: 844 });
      await item.click();
      await expect.poll(() => box.isVisible()).toBe(true);
      expect(await box.inputValue()).toContain(`(${tag}).`);
      found.push(...(await blockingViolations(page, 'reply typed at 390×844')));
      await screenshot(page, 'inbox-reply-02-typed-390');
      await expectNoSidewaysScroll(page, 'reply typed');
      await page.setViewportSize({ width: 1440, height: 900 });
      await box.focus();
      // Twice, quickly: a double send must not send twice.
      await page.keyboard.press('Control+Enter');
      await page.keyboard.press('Control+Enter');
      const status = conv.getByRole('status');
      await expect.poll(() => status.textContent(), { timeout: 60_000 }).toContain(`Sent to ${REPLY_TO} from ${REP}: Re: Pricing question ${tag}`);
      // Focus is back on the message's Reply button: the keyboard carries on.
      expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Reply');
      await atBothWidths(page, 'inbox-reply', '03-sent', found);
      expect(found, 'serious or critical axe violations').toEqual([]);

      // In sync22's Dovecot INBOX, once, threaded to the question.
      const out = await app.store.db.selectFrom('message').select(['message_id', 'to_addrs']).where('direction', '=', 'outbound').where('in_reply_to', '=', inbound).execute();
      expect(out).toHaveLength(1);
      expect(out[0]!.to_addrs).toEqual([REPLY_TO]);
      const got = await readInbox(PROSPECT, BED_PASS, out[0]!.message_id, { waitMs: 15_000 });
      expect(got).toHaveLength(1);
      const mail = await parseMail(got[0]!.source);
      expect(mail.inReplyTo).toBe(inbound);
      expect(mail.references).toEqual([earlier, inbound]);
      expect(mail.subject).toBe(`Re: Pricing question ${tag}`);
      expect(mail.to.map((a) => a.address)).toEqual([REPLY_TO]);
      expect(mail.from?.address).toBe(REP);
      expect(mail.text.replace(/\r\n/g, '\n')).toContain(`Hi Sam,\n\n40 seats are 4,800 a year (${tag}).\nRobin`);
      await new Promise((r) => setTimeout(r, 1000));
      expect(await countByMessageId(PROSPECT, BED_PASS, out[0]!.message_id)).toBe(1);
      expect(pageErrors).toEqual([]);
    }, 180_000);
  });
});

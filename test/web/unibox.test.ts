import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { seedGraph } from '../api.ts';
import { auditViewports, blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * Issue 19: the unified inbox in headless Chromium against the real app. Two panes at 1440 px (a
 * dense list, the conversation beside it), one at a time at 390 px with a Back control; search;
 * a reply's hostile HTML in the sandboxed frame, where nothing runs and no remote image loads until
 * the reader asks (a local "tracker" counts the requests); and a hundred replies triaged with the
 * keyboard alone (e done, l label, s snooze, a assign, u unread), checked in the database; an
 * intent filter saved as a view, an internal note, and both deleted after their confirmation.
 * Screenshots and axe at 1440×900 and 390×844.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'uni@cadenza.test', password: 'a long enough password', workspace: 'Unibox Co' };
const MANY = 100;

describe.skipIf(skip !== null)(`the unified inbox in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-unibox', roles: ['api'] });
  /** The "tracker" a hostile reply points its image, script and beacon at: every request is counted. */
  let tracker: Server;
  const hits: string[] = [];
  let trackerUrl = '';
  let ws = '';
  let ownerId = '';
  let hostileId = '';
  let threadId = '';
  /** The sequence conversation's enrollment and mailbox (the long-thread test adds to it). */
  let conv = { enrollmentId: '', mailboxId: '' };

  beforeAll(async () => {
    tracker = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'image/gif' }).end(Buffer.from('R0lGODlhAQABAAAAACw=', 'base64'));
    });
    await new Promise<void>((resolve) => tracker.listen(0, '127.0.0.1', resolve));
    trackerUrl = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise<void>((resolve) => tracker.close(() => resolve())));

  /** The owner's workspace with a sequence conversation, a hostile HTML reply and MANY plain replies. */
  async function seed(): Promise<void> {
    const db = web.app.store.db;
    const owner = await db.selectFrom('app_user').select(['id', 'workspace_id']).where('email', '=', OWNER.email).executeTakeFirstOrThrow();
    ws = owner.workspace_id;
    ownerId = owner.id;
    const g = await seedGraph(web.app.store, ws, 'uni', ownerId);
    await db.updateTable('lead').set({ company: 'Globex', first_name: 'Dana', last_name: 'Ross' }).where('id', '=', g.leadId!).execute();
    const random = seededRandom('unibox');
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
    threadId = g.messageId!;
    conv = { enrollmentId: g.enrollmentId!, mailboxId: g.mailboxId! };
    // Our step, before their reply: the conversation shows both.
    await db.insertInto('message').values({ id: newId(systemClock.now(), random), workspace_id: ws, mailbox_id: g.mailboxId!, enrollment_id: g.enrollmentId!, direction: 'outbound', message_id: '<step-uni@example.test>', subject: 'Hi', from_addr: 'rep-uni@example.test', at: at(600), excerpt: 'Hello Dana, worth a call?' }).execute();
    await db.updateTable('message').set({ new_text: 'Tuesday at 10 works.', excerpt: 'Tuesday at 10 works.\n\nOn Monday, rep wrote:\n> Hello Dana, worth a call?', at: at(1) }).where('id', '=', threadId).execute();
    hostileId = newId(systemClock.now(), random);
    await db
      .insertInto('message')
      .values({
        id: hostileId, workspace_id: ws, mailbox_id: g.mailboxId!, direction: 'inbound', message_id: '<hostile@evil.test>', subject: 'Our brochure', from_addr: 'mallory@evil.test', at: at(2),
        folder: 'inbox', label: 'human_reply', confidence: 0.95, rung: 'rules', action: 'inbox', excerpt: 'Please see the brochure', new_text: 'Please see the brochure',
        body_html:
          `<p>Please see <b>the brochure</b>.</p><img src="${trackerUrl}/pixel.gif" alt="tracker"><img src="x" onerror="fetch('${trackerUrl}/onerror')">` +
          `<script>fetch('${trackerUrl}/script');parent.document.title='pwned'</script><a href="javascript:fetch('${trackerUrl}/js')">click</a>` +
          `<svg onload="fetch('${trackerUrl}/svg')"></svg><iframe src="${trackerUrl}/frame"></iframe><div style="background:url(${trackerUrl}/css)">styled</div>` +
          `<div class="gmail_quote">On Monday you wrote:<blockquote>Hello Mallory</blockquote></div>`,
      })
      .execute();
    const rows = Array.from({ length: MANY }, (_, i) => ({
      id: newId(systemClock.now(), random), workspace_id: ws, mailbox_id: g.mailboxId!, direction: 'inbound' as const, message_id: `<bulk-${i}@prospects.test>`,
      subject: `Question ${i + 1}`, from_addr: `person${i + 1}@bulk.test`, at: at(10 + i), folder: 'inbox' as const, label: 'human_reply', confidence: 0.95, rung: 'rules', action: 'inbox',
      intent: i % 3 === 0 ? 'interested' : null, excerpt: `Reply number ${i + 1}`, new_text: `Reply number ${i + 1}`,
    }));
    await db.insertInto('message').values(rows).execute();
  }

  const audit = (page: Page, moment: string, found: string[]) => auditViewports(page, moment, found, screenshot);

  const focusedRow = (page: Page) => page.evaluate<string | null>(`(() => { const li = document.activeElement && document.activeElement.closest('li[data-message-id]'); return li ? li.dataset.messageId : null; })()`);

  it('shows two panes, searches, and renders a hostile reply in the sandboxed frame where nothing runs', async () => {
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await web.setupOwner(page, OWNER);
    await seed();
    const found: string[] = [];
    const rows = page.getByRole('list', { name: 'Messages' }).getByRole('listitem');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(MANY + 2);

    // The sequence conversation: our step and their reply, the quote folded.
    await page.keyboard.press('j');
    expect(await focusedRow(page)).toBe(threadId);
    const conversation = page.getByRole('region', { name: 'Conversation' });
    await conversation.getByRole('heading', { name: 'Re: Hi' }).waitFor();
    const thread = conversation.getByRole('region', { name: 'Thread' });
    await thread.getByText('Hello Dana, worth a call?').first().waitFor();
    await thread.getByText('Tuesday at 10 works.', { exact: true }).waitFor();
    await expect.poll(() => rows.first().getAttribute('aria-label')).toBe('Dana Ross, Globex: Re: Hi');
    await audit(page, 'unibox-01-two-panes', found);

    // The hostile reply: the frame is sandboxed without scripts; nothing ran, nothing was fetched.
    await page.keyboard.press('j');
    expect(await focusedRow(page)).toBe(hostileId);
    const frameEl = conversation.locator('iframe');
    await frameEl.waitFor();
    expect(await frameEl.getAttribute('sandbox')).toBe('allow-popups allow-popups-to-escape-sandbox');
    const frame = page.frames().find((f) => f.url().includes(`/inbox/messages/${hostileId}/frame`));
    expect(frame).toBeDefined();
    await frame!.getByText('the brochure').waitFor();
    expect(await frame!.locator('script, svg, iframe, [onerror], [onload]').count()).toBe(0);
    expect(await frame!.locator('details summary').textContent()).toBe('Show quoted history');
    expect(await frame!.locator('details').getAttribute('open')).toBeNull();
    await conversation.getByText('1 remote image blocked').waitFor();
    // The javascript: link lost its address (so it is no link at all).
    const jsLink = frame!.locator('a', { hasText: 'click' });
    await jsLink.waitFor();
    expect(await jsLink.getAttribute('href')).toBeNull();
    expect(await page.title()).not.toBe('pwned');
    expect(hits).toEqual([]);
    await audit(page, 'unibox-02-html-frame', found);

    // Images for this message only, when asked: the tracker sees the pixel, and still no script ran.
    await conversation.getByRole('button', { name: 'Load images for this message' }).click();
    await expect.poll(() => hits).toEqual(['/pixel.gif']);
    expect(await page.title()).not.toBe('pwned');

    // Search: / focuses the box; the list narrows on the server.
    await rows.first().focus();
    await page.keyboard.press('/');
    await page.keyboard.type('mallory brochure');
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByLabel('Search the inbox').fill('');
    await expect.poll(() => rows.count()).toBe(MANY + 2);

    // 390 px: the list, then the conversation on its own with Back; Escape goes back too.
    await page.setViewportSize({ width: 390, height: 844 });
    await rows.first().focus();
    expect(await conversation.isVisible()).toBe(false);
    await page.keyboard.press('Enter');
    await conversation.getByRole('heading', { name: 'Re: Hi' }).waitFor();
    expect(await page.getByRole('region', { name: 'Message list' }).isVisible()).toBe(false);
    await screenshot(page, 'unibox-03-conversation-phone');
    found.push(...(await blockingViolations(page, 'unibox-03 conversation at 390×844')));
    await conversation.getByRole('button', { name: '← Back to the list' }).click();
    await page.getByRole('region', { name: 'Message list' }).waitFor();
    expect(await focusedRow(page)).toBe(threadId);
    await page.keyboard.press('o');
    await conversation.getByRole('heading', { name: 'Re: Hi' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('region', { name: 'Message list' }).waitFor();
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it(`triages ${MANY} replies with the keyboard alone: done, label, snooze, assign, unread`, async () => {
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(web.app.url!);
    await web.signIn(page, OWNER);
    const rows = page.getByRole('list', { name: 'Messages' }).getByRole('listitem');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(MANY + 2);
    const found: string[] = [];
    // Skip the two conversations of the first test: the bulk replies follow, newest first.
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    const dialog = page.getByRole('dialog');
    let labelled = 0;
    let snoozed = 0;
    let assigned = 0;
    let unread = 0;
    const unreadIds: string[] = [];
    for (let i = 0; i < MANY; i++) {
      const id = await focusedRow(page);
      expect(id, `reply ${i}`).not.toBeNull();
      if (i % 10 === 0) {
        // l: type a label's name, Enter (the first time defines it).
        await page.keyboard.press('l');
        await dialog.getByLabel('Find or create a label').waitFor();
        if (i === 0) await audit(page, 'unibox-04-label-picker', found);
        await page.keyboard.type('Follow');
        if (i === 0) {
          await dialog.getByRole('button', { name: 'Create “Follow” and put it on' }).waitFor();
          await page.keyboard.type(' up');
        } else await dialog.getByRole('button', { name: /Follow up/ }).waitFor();
        await page.keyboard.press('Enter');
        await dialog.waitFor({ state: 'hidden' });
        await expect.poll(() => focusedRow(page), { timeout: 10_000 }).toBe(id);
        labelled++;
      }
      if (i % 7 === 3) {
        // a: the first teammate (the owner), Enter.
        await page.keyboard.press('a');
        await dialog.getByRole('button', { name: /uni@cadenza.test|Unibox/ }).first().waitFor();
        await page.keyboard.press('Enter');
        await dialog.waitFor({ state: 'hidden' });
        await expect.poll(() => focusedRow(page), { timeout: 10_000 }).toBe(id);
        assigned++;
      }
      if (i % 9 === 4) {
        // s: later today, Enter; the reply leaves the inbox and the next one is selected.
        await page.keyboard.press('s');
        await dialog.getByRole('button', { name: 'Later today (in 3 hours)' }).waitFor();
        if (snoozed === 0) await audit(page, 'unibox-05-snooze-picker', found);
        await page.keyboard.press('Enter');
        await dialog.waitFor({ state: 'hidden' });
        snoozed++;
      } else if (i % 13 === 5) {
        // u: unread again, and left in the inbox; j moves on.
        await page.keyboard.press('u');
        await expect.poll(() => page.locator(`li[data-message-id="${id}"]`).getAttribute('class'), { timeout: 10_000 }).toContain('is-unread');
        await page.keyboard.press('j');
        unread++;
        unreadIds.push(id!);
      } else {
        await page.keyboard.press('e');
      }
      // Each key is a request and a new render: on CI's two cores under load, over the poll's default
      // second. While the list re-renders no row has the focus for a moment: wait for the next one.
      await expect.poll(async () => { const next = await focusedRow(page); return next !== null && next !== id; }, { message: `after reply ${i}`, timeout: 10_000 }).toBe(true);
    }
    const db = web.app.store.db;
    const readBulk = () =>
      db
        .selectFrom('message as m')
        .leftJoin('inbox_state as s', 's.message_id', 'm.id')
        .select(['m.id', 's.done_at', 's.snoozed_until', 's.assignee_user_id'])
        .where('m.workspace_id', '=', ws)
        .where('m.message_id', 'like', '<bulk-%')
        .execute();
    // The last key's request may still be on its way when the loop ends: wait for it to land.
    await expect.poll(async () => (await readBulk()).filter((r) => r.done_at !== null).length, { timeout: 10_000 }).toBe(MANY - snoozed - unread);
    const bulk = await readBulk();
    expect(bulk.filter((r) => r.done_at !== null)).toHaveLength(MANY - snoozed - unread);
    expect(bulk.filter((r) => r.snoozed_until !== null)).toHaveLength(snoozed);
    expect(bulk.filter((r) => r.assignee_user_id === ownerId)).toHaveLength(assigned);
    const label = await db.selectFrom('inbox_label').select('id').where('workspace_id', '=', ws).where('name', '=', 'Follow up').executeTakeFirstOrThrow();
    expect(await db.selectFrom('inbox_message_label').select('message_id').where('label_id', '=', label.id).execute()).toHaveLength(labelled);
    const readMarks = await db.selectFrom('inbox_read').select('message_id').where('user_id', '=', ownerId).where('message_id', 'in', bulk.map((r) => r.id)).execute();
    // Done with the last reply, the selection steps back to the one before it still in the list (one
    // marked unread): shown again, it is read again. Every other one marked unread stays so.
    const last = await focusedRow(page);
    const readAgain = unreadIds.filter((x) => x === last);
    expect(readMarks.filter((r) => unreadIds.includes(r.message_id)).map((r) => r.message_id)).toEqual(readAgain);
    expect(readMarks).toHaveLength(MANY - unread + readAgain.length);
    // What is left in the inbox: the two conversations and the replies marked unread.
    expect(unread).toBeGreaterThan(3);
    await expect.poll(() => rows.count()).toBe(2 + unread);
    await screenshot(page, 'unibox-06-after-triage-desktop');
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
    await page.close();
  }, 300_000);

  it('a thread over 500 messages opens on its newest 500; Show earlier messages brings the rest', async () => {
    const db = web.app.store.db;
    const EXTRA = 510;
    const random = seededRandom('unibox-long-thread');
    const first = await db.selectFrom('message').select('at').where('enrollment_id', '=', conv.enrollmentId).orderBy('at').executeTakeFirstOrThrow();
    await db
      .insertInto('message')
      .values(
        Array.from({ length: EXTRA }, (_, i) => ({
          id: newId(systemClock.now(), random), workspace_id: ws, mailbox_id: conv.mailboxId, enrollment_id: conv.enrollmentId, direction: i % 2 ? ('inbound' as const) : ('outbound' as const),
          message_id: `<earlier-${i}@prospects.test>`, subject: 'Re: Hi', from_addr: 'lead-uni@prospects.test', at: new Date(first.at.getTime() - (EXTRA - i) * 60_000), excerpt: `Earlier note ${i + 1}`,
        })),
      )
      .execute();
    const whole = EXTRA + 2;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(web.app.url!);
    await web.signIn(page, OWNER);
    const found: string[] = [];
    await page.locator(`li[data-message-id="${threadId}"]`).click();
    const conversation = page.getByRole('region', { name: 'Conversation' });
    const thread = conversation.getByRole('region', { name: 'Thread' });
    const entries = thread.getByRole('list').first().getByRole('listitem');
    await expect.poll(() => entries.count(), { timeout: 15_000 }).toBe(500);
    // The newest are shown: their reply last, the oldest twelve not yet.
    await thread.getByText('Tuesday at 10 works.', { exact: true }).waitFor();
    expect(await thread.getByText(`Earlier note ${whole - 500}`, { exact: true }).count()).toBe(0);
    expect(await thread.getByText(`Earlier note ${whole - 499}`, { exact: true }).count()).toBe(1);
    const more = thread.getByRole('button', { name: 'Show earlier messages' });
    await more.waitFor();
    await audit(page, 'unibox-07-long-thread', found);
    await more.click();
    await expect.poll(() => entries.count()).toBe(whole);
    expect(await thread.getByText('Earlier note 1', { exact: true }).count()).toBe(1);
    expect(await more.count()).toBe(0);
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('filters by intent, saves the filters as a view, and writes an internal note; deleting either asks first', async () => {
    const db = web.app.store.db;
    const random = seededRandom('unibox-views');
    const base = { workspace_id: ws, mailbox_id: conv.mailboxId, direction: 'inbound' as const, folder: 'inbox' as const, label: 'human_reply', confidence: 0.95, rung: 'rules', action: 'inbox' };
    const seeded = [
      { subject: 'Meeting ask 1', intent: 'meeting' },
      { subject: 'Meeting ask 2', intent: 'meeting' },
      { subject: 'Not now please', intent: 'not_now' },
    ];
    await db
      .insertInto('message')
      .values(seeded.map((m, i) => ({ ...base, id: newId(systemClock.now(), random), message_id: `<view-${i}@prospects.test>`, subject: m.subject, intent: m.intent, from_addr: `view${i}@prospects.test`, at: new Date(Date.now() - i * 1000), excerpt: m.subject, new_text: m.subject })))
      .execute();
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(web.app.url!);
    await web.signIn(page, OWNER);
    const found: string[] = [];
    const rows = page.getByRole('list', { name: 'Messages' }).getByRole('listitem');
    const labels = () => rows.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
    await rows.first().waitFor();

    // Intent: meeting, then the filters saved as the view "Meetings", cleared, and chosen again.
    await page.getByLabel('Intent', { exact: true }).selectOption('meeting');
    await expect.poll(async () => (await labels()).map((l) => l.split(': ').pop()).sort()).toEqual(['Meeting ask 1', 'Meeting ask 2']);
    // The list as filtered, exported: the same two messages, whatever page the screen holds.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('inbox.csv');
    const exported = readFileSync((await download.path())!, 'utf8').trimEnd().split('\r\n');
    expect(exported[0]!.split(',').slice(0, 8)).toEqual(['at', 'from', 'lead_name', 'company', 'subject', 'excerpt', 'label', 'intent']);
    expect(exported.slice(1).map((l) => l.split(',')[4]).sort()).toEqual(['Meeting ask 1', 'Meeting ask 2']);
    await page.getByRole('button', { name: 'Save view' }).click();
    await page.getByLabel('Name of the new view').fill('Meetings');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByLabel('View', { exact: true }).locator('option:checked').textContent()).toBe('Meetings');
    await page.getByLabel('Intent', { exact: true }).selectOption('');
    await expect.poll(async () => (await labels()).length).toBeGreaterThan(2);
    await page.getByLabel('View', { exact: true }).selectOption({ label: 'Meetings' });
    await expect.poll(async () => (await labels()).length).toBe(2);

    // A note on the first: the team sees it; deleting it asks first (Escape keeps it).
    await rows.first().click();
    const notes = page.getByRole('region', { name: 'Internal notes' });
    await notes.getByLabel('New internal note').fill('Call her on Tuesday.');
    await notes.getByRole('button', { name: 'Add note' }).click();
    // Exact: the note itself, not the confirmation below that quotes it (it sits in the same region).
    const note = notes.getByText('Call her on Tuesday.', { exact: true });
    await note.waitFor();
    await audit(page, 'unibox-08-view-and-note', found);
    await notes.getByRole('button', { name: /^Delete the note of / }).click();
    const askNote = page.getByRole('alertdialog', { name: /^Delete the note of / });
    await askNote.getByText('“Call her on Tuesday.” goes for the whole team.').waitFor();
    await audit(page, 'unibox-09-delete-note-asked', found);
    await page.keyboard.press('Escape');
    await askNote.waitFor({ state: 'detached' });
    expect(await db.selectFrom('inbox_note').select('id').execute()).toHaveLength(1);
    await notes.getByRole('button', { name: /^Delete the note of / }).click();
    await askNote.getByRole('button', { name: 'Delete note' }).click();
    await askNote.waitFor({ state: 'detached' });
    await note.waitFor({ state: 'detached' });
    expect(await db.selectFrom('inbox_note').select('id').execute()).toEqual([]);

    // The view deleted after its confirmation.
    await page.getByRole('button', { name: 'Delete view', exact: true }).click();
    await page.getByRole('alertdialog', { name: 'Delete the view Meetings?' }).getByRole('button', { name: 'Delete view' }).click();
    await expect.poll(() => page.getByLabel('View', { exact: true }).locator('option').allTextContents()).toEqual(['(no saved view)']);
    expect(await db.selectFrom('inbox_view').select('id').execute()).toEqual([]);
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
    await page.close();
  }, 120_000);
});

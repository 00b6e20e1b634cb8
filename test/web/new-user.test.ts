import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * Issue 11, what a new user hit in the web app, in headless Chromium against the real app:
 * the import hid the warnings the command line shows (an invalid time zone), the enrollment list
 * stayed empty after "Enroll all leads" until a reload, and an enrollment stuck behind a failing
 * mailbox showed "Due —" with no reason. At 1440 px and on a phone.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'newbie@cadenza.test', password: 'a long enough password', workspace: 'Newbies' };

describe.skipIf(skip !== null)(`a new user's first steps in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // The refused setting is a 400 the browser logs, as the 401 before sign-in.
  const web = webSuite({ prefix: 'web-new-user', roles: ['api'], expectedConsole: /status of 40[01]/ });

  it('shows import warnings, refreshes the enrollments after Enroll all leads, and says why an enrollment is stuck', async () => {
    const { app } = web;
    const page = await web.newPage({ viewport: { width: 1440, height: 1000 } });
    await web.setupOwner(page, OWNER);
    const a11y: string[] = [];

    // The import: one lead with a time zone the tz data does not know.
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Leads' }).click();
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const csv = 'email,first_name,time_zone\nana@acme.test,Ana,Europe/Paris\nbo@beta.test,Bo,Mars/Olympus\n';
    await page.getByLabel('CSV file').setInputFiles({ name: 'leads.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import leads.csv' }).click();
    await page.getByText('2 rows read: 2 imported').waitFor({ timeout: 30_000 });
    const warned = page.getByRole('list', { name: 'Imported with a value left out' });
    await warned.waitFor();
    expect(await warned.innerText()).toMatch(/^1 with a time zone Cadenza does not recognise/);
    await screenshot(page, 'new-user-01-import-warning');
    a11y.push(...(await blockingViolations(page, 'the import with a warning')));

    // A sequence on a mailbox whose server cannot be reached.
    const ws = await app.store.db.selectFrom('workspace').select('id').where('name', '=', OWNER.workspace).executeTakeFirstOrThrow();
    const random = seededRandom('web-new-user');
    const mailboxId = newId(Date.now(), random);
    await app.store.db.insertInto('mailbox').values({ id: mailboxId, workspace_id: ws.id, user_id: null, email: 'rep@acme.test', provider: 'smtp_imap' }).execute();
    const def = validateDefinition({ key: 'first', name: 'First one', window: 'any', mailboxes: ['rep@acme.test'], steps: [{ key: 'hello', type: 'email', subject: 'Hello', body: 'Hi {{first_name}}' }] });
    const { sequenceId } = await applyDefinition(app.store, { clock: systemClock, random }, ws.id, def);
    await page.goto(`${app.url}/sequences/${sequenceId}`);
    const list = page.getByRole('region', { name: 'Enrollments' });
    await list.getByText('No enrollment in state active.').waitFor();
    await page.getByRole('button', { name: 'Enroll all leads' }).click();
    await page.getByText('2 enrolled.').waitFor();
    // Without a reload.
    await list.getByRole('link', { name: 'ana@acme.test' }).waitFor({ timeout: 5_000 });
    await list.getByRole('link', { name: 'bo@beta.test' }).waitFor();

    // What the scheduler and a sender that cannot reach the server leave behind for Ana.
    const ana = await app.store.db.selectFrom('enrollment as e').innerJoin('lead as l', 'l.id', 'e.lead_id').select(['e.id', 'e.next_step_id']).where('l.email', '=', 'ana@acme.test').executeTakeFirstOrThrow();
    await app.store.db.updateTable('enrollment').set({ waiting_for: 'send', due_at: null }).where('id', '=', ana.id).execute();
    await app.store.db
      .insertInto('send_request')
      .values({ id: newId(Date.now(), random), workspace_id: ws.id, enrollment_id: ana.id, step_id: ana.next_step_id!, mailbox_id: mailboxId, state: 'queued', due_at: new Date(), attempts: 3, last_error: 'transient: connect: connect ECONNREFUSED 10.0.0.9:587' })
      .execute();
    await page.reload();
    const stuck = list.getByTestId('blocked');
    await stuck.waitFor();
    expect(await stuck.innerText()).toMatch(/Sending from rep@acme\.test keeps failing \(3 tries so far\)[\s\S]*What to do: Check the mailbox's SMTP host, port and password/);
    // The server's words only behind the disclosure.
    expect(await stuck.getByText('transient: connect: connect ECONNREFUSED 10.0.0.9:587').isVisible()).toBe(false);
    await stuck.getByText('Details').click();
    expect(await stuck.getByText('transient: connect: connect ECONNREFUSED 10.0.0.9:587').isVisible()).toBe(true);
    await screenshot(page, 'new-user-02-blocked-1440');
    a11y.push(...(await blockingViolations(page, 'a stuck enrollment')));

    // The mailbox says it too.
    await nav.getByRole('link', { name: 'Mailboxes' }).click();
    await page.getByText(/^Sending fails: connect: connect ECONNREFUSED 10\.0\.0\.9:587/).waitFor();

    // A refused setting names its field in words, not as the code's path ("body.timeZone").
    await nav.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Time zone').fill('Mars/Olympus');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const refused = page.getByText(/^Time zone: /);
    await refused.waitFor();
    expect(await page.getByText(/body\.timeZone/).count()).toBe(0);

    // On a phone the enrollment list still reads, nothing wider than the screen.
    const phone = await web.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
    await phone.goto(app.url!);
    await web.signIn(phone, OWNER);
    await phone.goto(`${app.url}/sequences/${sequenceId}`);
    await phone.getByTestId('blocked').waitFor();
    const wide = await phone.evaluate(() => [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > 392 && !el.closest('.table')).slice(0, 5).map((el) => `${el.tagName}.${el.className}`));
    expect(wide, 'elements wider than the phone (a table scrolls by itself)').toEqual([]);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390 + 1);
    await screenshot(phone, 'new-user-03-blocked-phone');
    expect(a11y, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
  }, 120_000);
});

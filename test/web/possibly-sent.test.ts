import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { chromiumSkipReason } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * A possibly-sent step as a rep meets it, in headless Chromium against the real app: the lead page
 * lists the enrollment's emails, says "Possibly sent" and why in plain words, and "Send again"
 * (after the confirm) queues the same request once more. A mailbox's warnings show on Mailboxes.
 * axe and screenshots at 1440×900 and 390×844 (test-results/screens/possibly-sent-*).
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'pia@cadenza.test', password: 'a long enough password', workspace: 'Acme' };
const WARNING = 'serverSavesSent was wrong and was switched off: Cadenza now writes the Sent copy itself';

describe.skipIf(skip !== null)(`a possibly-sent step in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-possibly-sent', roles: ['api'], postgresWhenAvailable: true });

  /** A mailbox (with a Sent-copy warning), a two-step sequence, one lead whose intro is possibly sent. */
  async function seed(workspaceId: string): Promise<{ leadId: string; requestId: string }> {
    const { app } = web;
    const random = seededRandom('web-possibly-sent');
    const deps = { clock: systemClock, random };
    const db = app.store.db;
    const mailboxId = newId(Date.now(), random);
    await db
      .insertInto('mailbox')
      .values({ id: mailboxId, workspace_id: workspaceId, user_id: null, email: 'rep@acme.test', provider: 'smtp_imap', settings: JSON.stringify({ sentCopyCheck: { warning: WARNING } }) })
      .execute();
    const def = validateDefinition({
      key: 'first-touch', name: 'First touch', window: 'any', holidays: false, mailboxes: ['rep@acme.test'],
      steps: [
        { key: 'intro', type: 'email', delay: '0 days', subject: 'Hello', body: 'Hi {{first_name}}' },
        { key: 'follow-up', type: 'email', delay: '3 days', subject: 'Re: Hello', body: 'Any thoughts?' },
      ],
    });
    const sequenceId = (await applyDefinition(app.store, deps, workspaceId, def)).sequenceId;
    const leadId = newId(Date.now(), random);
    await db.insertInto('lead').values({ id: leadId, workspace_id: workspaceId, email: 'ann@prospect.test', email_norm: 'ann@prospect.test', first_name: 'Ann' }).execute();
    await bulkEnroll(app.store, deps, { workspaceId, sequenceId, leadIds: [leadId] });
    const e = await db.selectFrom('enrollment').select('id').where('lead_id', '=', leadId).executeTakeFirstOrThrow();
    const intro = await db.selectFrom('step').select('id').where('sequence_id', '=', sequenceId).where('key', '=', 'intro').executeTakeFirstOrThrow();
    // The state a crash after the handover leaves (src/store/migrations/0019_possibly_sent.sql).
    await db.deleteFrom('send_request').where('enrollment_id', '=', e.id).execute();
    const requestId = newId(Date.now(), random);
    await db
      .insertInto('send_request')
      .values({ id: requestId, workspace_id: workspaceId, enrollment_id: e.id, step_id: intro.id, mailbox_id: mailboxId, state: 'possibly_sent', due_at: new Date(Date.now() - 3_600_000), message_id: '<intro-1@acme.test>', attempts: 1, proof: 'copy_first' })
      .execute();
    return { leadId, requestId };
  }

  it('shows "Possibly sent" on the lead page and sends it again after the confirm', async () => {
    const { app, errors } = web;
    const page = await web.newPage({ viewport: { width: 1280, height: 900 } });
    await web.setupOwner(page, OWNER);
    const ws = await app.store.db.selectFrom('workspace').select('id').where('name', '=', 'Acme').executeTakeFirstOrThrow();
    const { leadId, requestId } = await seed(ws.id);
    const a11y: string[] = [];

    await page.goto(`${app.url}/leads/${leadId}`);
    const side = page.getByRole('complementary', { name: 'Lead' });
    const emails = side.getByRole('list', { name: 'Emails of First touch' });
    await emails.getByText('Possibly sent').waitFor();
    await emails.getByText('cannot tell whether it left').waitFor();
    await atBothWidths(page, 'possibly-sent', '01-lead', a11y);

    // Cancelling the confirmation sends nothing.
    const ask = page.getByRole('alertdialog', { name: /^Send step “intro” of .* again\?$/ });
    await emails.getByRole('button', { name: /^Send again/ }).click();
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    expect((await app.store.db.selectFrom('send_request').select('state').where('id', '=', requestId).executeTakeFirstOrThrow()).state).toBe('possibly_sent');

    await emails.getByRole('button', { name: /^Send again/ }).click();
    await ask.getByText('Only do this if the prospect did not get it.', { exact: false }).waitFor();
    await atBothWidths(page, 'possibly-sent', '02-confirm', a11y);
    await ask.getByRole('button', { name: 'Send again', exact: true }).click();
    await emails.getByText('Queued').waitFor();
    await emails.getByText('resend asked for by hand').waitFor();
    await expect(emails.getByRole('button', { name: /^Send again/ }).count()).resolves.toBe(0);
    const r = await app.store.db.selectFrom('send_request').select(['state', 'manual_resend', 'message_id']).where('id', '=', requestId).executeTakeFirstOrThrow();
    expect(r).toEqual({ state: 'queued', manual_resend: true, message_id: '<intro-1@acme.test>' });
    await atBothWidths(page, 'possibly-sent', '03-queued', a11y);

    // The mailbox's Sent-copy warning.
    await page.goto(`${app.url}/mailboxes`);
    await page.getByText(`Warning: ${WARNING}`).waitFor();
    await atBothWidths(page, 'possibly-sent', '04-mailbox-warning', a11y);

    expect(a11y, 'serious or critical axe violations').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});

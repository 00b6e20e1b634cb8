import { randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seedWorkspace } from '../../../test/api.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { mailBed, readInbox, resetMailBed } from '../../../test/mail/mailbed.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { smtpSystemMailer, systemMailerSettingsFrom, type SystemMailer } from '../system-mailer.ts';
import { sendDueWeeklyReports } from './job.ts';

/**
 * The weekly report through real mail: the job's system mailer submits it to Postfix with AUTH as
 * sync91 (STARTTLS, the bed's self-signed certificate), Dovecot delivers it to the owner, sync92,
 * and the test reads it over IMAP with its CSV attached.
 */
const SENDER = { user: 'sync91@inbox.test', pass: 'pass' };
const OWNER = { user: 'sync92@inbox.test', pass: 'pass' };

describeMailBed('weekly report emailed through Postfix, read from Dovecot', () => {
  let store: TestStore;
  let mailer: SystemMailer;
  const sent: string[] = [];
  // The bed keeps earlier runs' mail: the workspace name tells this run's report apart.
  const name = `Weekly ${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    await resetMailBed([OWNER.user]);
    const url = `smtp://${encodeURIComponent(SENDER.user)}:${SENDER.pass}@${mailBed.host}:${mailBed.submissionPort}?tls.rejectUnauthorized=false`;
    const real = smtpSystemMailer(systemMailerSettingsFrom({ CADENZA_SMTP_URL: url })!);
    mailer = { from: real.from, close: real.close, send: async (m) => (sent.push((await real.send(m)).messageId), { messageId: sent.at(-1)! }) };
    store = await freshStore(testBackends().includes('postgres') ? 'postgres' : 'pglite');
    const w = await seedWorkspace(store, name, OWNER.user);
    // Saved before this week's hour (Monday 08:00): a schedule saved after it waits for the next week.
    await store.db.insertInto('weekly_report_setting').values({ workspace_id: w.workspaceId, enabled: true, weekday: 1, hour: 8, updated_at: new Date(DateTime.utc().startOf('week').toMillis()) }).execute();
  }, 120_000);
  afterAll(async () => {
    mailer?.close();
    await store?.close();
  });

  it('the owner receives the week\'s figures with the CSV attached', async () => {
    // Monday 09:00 UTC: the report of the week just ended is due (workspace zone UTC).
    const clock = new SimClock(DateTime.utc().startOf('week').plus({ hours: 9 }).toMillis());
    const r = await sendDueWeeklyReports({ store, clock, mailer, owner: 'mail-test' });
    expect(r.failed).toEqual([]);
    expect(r.sent).toHaveLength(1);
    const got = await readInbox(OWNER.user, OWNER.pass, sent[0]!, { waitMs: 20_000 });
    expect(got, 'the report reached sync92 through Postfix and LMTP').toHaveLength(1);
    const mail = await PostalMime.parse(got[0]!.source);
    expect(mail.from?.address).toBe(SENDER.user);
    expect(mail.subject).toMatch(new RegExp(`^${name}: 0 sends, 0 replies, 0 meetings \\(`));
    expect(mail.text).toContain('No sequence sent anything this week.');
    expect(mail.attachments.map((a) => a.mimeType)).toEqual(['text/csv']);
    // A second run in the same week sends nothing.
    expect((await sendDueWeeklyReports({ store, clock, mailer, owner: 'mail-test-2' })).sent).toEqual([]);
    expect(sent).toHaveLength(1);
  }, 60_000);
});

import { randomBytes } from 'node:crypto';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seedGraph, seedWorkspace } from '../../../test/api.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { mailBed, readInbox, resetMailBed } from '../../../test/mail/mailbed.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { seededRandom } from '../../common/random.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { smtpSystemMailer, systemMailerSettingsFrom, type SystemMailer } from '../system-mailer.ts';
import { sendDueDigests } from './digest.ts';
import { fanOut } from './fanout.ts';
import { saveChoices } from './sql/preferences.ts';

/**
 * The notification digest through real mail: a rep who chose email for tasks gets, an hour after
 * the task fell due, one digest submitted to Postfix by the system mailer (AUTH as sync67,
 * STARTTLS with the bed's self-signed certificate), delivered by Dovecot to sync68 and read back
 * over IMAP; the next run, with nothing waiting, sends nothing.
 */
const SENDER = { user: 'sync67@inbox.test', pass: 'pass' };
const REP = { user: 'sync68@inbox.test', pass: 'pass' };

describeMailBed('notification digest emailed through Postfix, read from Dovecot', () => {
  let store: TestStore;
  let mailer: SystemMailer;
  const sent: string[] = [];
  // The bed keeps earlier runs' mail: the workspace name tells this run's digest apart.
  const name = `Digest ${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    await resetMailBed([REP.user]);
    const url = `smtp://${encodeURIComponent(SENDER.user)}:${SENDER.pass}@${mailBed.host}:${mailBed.submissionPort}?tls.rejectUnauthorized=false`;
    const real = smtpSystemMailer(systemMailerSettingsFrom({ CADENZA_SMTP_URL: url })!);
    mailer = { from: real.from, close: real.close, send: async (m) => (sent.push((await real.send(m)).messageId), { messageId: sent.at(-1)! }) };
    store = await freshStore(testBackends().includes('postgres') ? 'postgres' : 'pglite');
  }, 120_000);
  afterAll(async () => {
    mailer?.close();
    await store?.destroy();
  });

  it('the rep receives one digest of the task that fell due, and nothing after', async () => {
    const w = await seedWorkspace(store, name, REP.user);
    const clock = new SimClock(Date.now());
    await saveChoices(store.db, w.workspaceId, w.userId, { kinds: { task_due: { inApp: true, browser: false, email: true, slack: false } }, scope: 'mine', digestEveryHours: 1 }, new Date(clock.now()));
    // The call task falls due (seedGraph's), recorded by 0099's trigger, handed out.
    await seedGraph(store, w.workspaceId, 'digest', w.userId);
    expect(await fanOut({ store, clock })).toBe(1);
    const run = () => sendDueDigests({ store, clock, random: seededRandom('digest-mail'), mailer, appUrl: 'https://cadenza.example.test' });
    expect((await run()).sent).toEqual([]);
    clock.advance(3_600_000);
    expect(await run()).toEqual({ sent: [{ userId: w.userId, items: 1 }], failed: [] });
    const got = await readInbox(REP.user, REP.pass, sent[0]!, { waitMs: 20_000 });
    expect(got, 'the digest reached sync68 through Postfix and LMTP').toHaveLength(1);
    const mail = await PostalMime.parse(got[0]!.source);
    expect(mail.from?.address).toBe(SENDER.user);
    expect(mail.subject).toBe(`Cadenza: 1 notification in ${name}`);
    expect(mail.text).toContain('A call or manual task is due (1)');
    expect(mail.text).toContain('- Call due: lead-digest@prospects.test: Call them');
    expect(mail.text).toContain('https://cadenza.example.test/tasks');
    clock.advance(24 * 3_600_000);
    expect(await run()).toEqual({ sent: [], failed: [] });
    expect(sent).toHaveLength(1);
  }, 60_000);
});

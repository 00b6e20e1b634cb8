import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { mailBed, readInbox, resetMailBed } from '../../../test/mail/mailbed.ts';
import { testBackends } from '../../../test/stores.ts';
import { parseMail } from '../../ingest/parse/parse-mail.ts';
import { smtpSystemMailer, systemMailerSettingsFrom, type SystemMailer } from '../system-mailer.ts';

/**
 * An invitation through real mail: Cadenza's system mailer submits it to Postfix with AUTH as
 * sync18 (STARTTLS with the bed's self-signed certificate, configured as an operator would, in
 * CADENZA_SMTP_URL), Dovecot delivers it to sync19's INBOX, the test reads it over IMAP, follows
 * the link and joins.
 */
const SENDER = { user: 'sync18@inbox.test', pass: 'pass' };
const INVITEE = { user: 'sync19@inbox.test', pass: 'pass' };
const PUBLIC_URL = 'https://cadenza.example.test';

describeMailBed('invitation emailed through Postfix, read from Dovecot, accepted', () => {
  let h: ApiHarness;
  let owner: Browser;
  let workspaceId: string;
  let mailer: SystemMailer;
  /** Message-IDs of what the real mailer handed to Postfix, to find the message over IMAP. */
  const sent: string[] = [];
  // The bed keeps earlier runs' mail: the workspace name tells this run's invitation apart.
  const workspaceName = `Acme ${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    await resetMailBed([INVITEE.user]);
    const url = `smtp://${encodeURIComponent(SENDER.user)}:${SENDER.pass}@${mailBed.host}:${mailBed.submissionPort}?tls.rejectUnauthorized=false`;
    // No CADENZA_MAIL_FROM: the SMTP user, an address, is the From.
    const settings = systemMailerSettingsFrom({ CADENZA_SMTP_URL: url })!;
    expect(settings.from).toBe(SENDER.user);
    const real = smtpSystemMailer(settings);
    mailer = { from: real.from, close: real.close, send: async (m) => (sent.push((await real.send(m)).messageId), { messageId: sent.at(-1)! }) };
    const backend = testBackends().includes('postgres') ? 'postgres' : 'pglite';
    h = await apiHarness(backend, { mailer, publicUrl: PUBLIC_URL });
    const w = await seedWorkspace(h.store, workspaceName, 'olivia@cadenza.test');
    workspaceId = w.workspaceId;
    owner = await login(h.app, 'olivia@cadenza.test', w.password);
  }, 120_000);
  afterAll(async () => {
    mailer?.close();
    await h?.close();
  });

  it('the invitee receives the link by email, opens it, sets a password and joins as admin', async () => {
    const r = await owner.call('POST', `/api/workspaces/${workspaceId}/invitations`, { email: INVITEE.user, role: 'admin' });
    expect(r.statusCode, r.body).toBe(201);
    // Emailed: the link is not handed to the admin.
    expect(r.json()).toMatchObject({ emailed: true, link: null, mailError: null, invitation: { email: INVITEE.user, role: 'admin', status: 'pending' } });
    expect(sent).toHaveLength(1);

    const got = await readInbox(INVITEE.user, INVITEE.pass, sent[0]!, { waitMs: 20_000 });
    expect(got, 'the invitation reached sync19 through Postfix and LMTP').toHaveLength(1);
    const mail = await parseMail(got[0]!.source);
    expect(mail.from?.address).toBe(SENDER.user);
    expect(mail.to.map((a) => a.address)).toEqual([INVITEE.user]);
    expect(mail.subject).toBe(`${workspaceName} invited you to ${workspaceName} on Cadenza`);
    // Postfix saw an authenticated submission (smtpd_sasl_authenticated_header).
    expect(got[0]!.source.toString('utf8')).toMatch(/Authenticated sender: sync18@inbox\.test/);
    const link = /https:\/\/cadenza\.example\.test\/invite\/([A-Za-z0-9_-]{43})\b/.exec(mail.text);
    expect(link, mail.text).not.toBeNull();
    expect(mail.text).toContain(`join the workspace "${workspaceName}" on Cadenza as an admin`);
    const token = link![1]!;

    // Following the link: the page looks it up, then the invitee signs up.
    const lookup = await h.app.inject({ method: 'POST', url: '/api/invitations/lookup', payload: { token } });
    expect(lookup.json()).toMatchObject({ workspaceName, email: INVITEE.user, role: 'admin', accountExists: false });
    const joined = await h.app.inject({ method: 'POST', url: '/api/invitations/signup', payload: { token, name: 'Sync Nineteen', password: 'a long enough password' } });
    expect(joined.statusCode, joined.body).toBe(201);
    expect(joined.json().me.workspaces).toEqual([{ id: workspaceId, name: workspaceName, role: 'admin', agencyId: null, viaAgency: false }]);
    const invitee = await login(h.app, INVITEE.user, 'a long enough password');
    const members = (await invitee.call('GET', `/api/workspaces/${workspaceId}/members`)).json().members;
    expect(members.map((m: { email: string; role: string }) => [m.email, m.role])).toContainEqual([INVITEE.user, 'admin']);
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../app/app.ts';
import { SESSION_COOKIE } from '../../api/auth/sessions.ts';
import { openMasterKey } from '../../mailbox/master-key.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { applyGrants } from '../../ops/mtls/apply-grants.ts';
import { DB_ROLES } from '../../ops/mtls/db-grants.ts';
import { migrate } from '../../store/migrate.ts';
import { openStore, type Store } from '../../store/store.ts';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { bedMailboxBody, readInbox, resetMailBed } from '../../../test/mail/mailbed.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { startTlsCluster, tlsClusterSkipReason, type TlsCluster } from '../../../test/ops/pg-tls-cluster.ts';

/**
 * The three API features that need a mailbox credential, with the four roles apart, each logged in
 * as its own database role by its own client certificate (cluster on port 5573 that admits only
 * client certificates), under `cadenza db grants`: the API's role may not read
 * mailbox_credential.ciphertext, so before credential tasks the test and the reply answered 403.
 * Now the API writes a task and the sender role carries it out: the test signs in to the mail
 * bed's servers, the reply lands once in the prospect's INBOX (its idempotency key replays), and a
 * removed OAuth mailbox's revocation is done by the sender from the task its credential's deletion
 * wrote. With the sender stopped, the API says so (503).
 */
const PORT = 5573;
const REP = 'sync60@inbox.test';
const PROSPECT = 'sync61@inbox.test';
const skip = tlsClusterSkipReason();

describeMailBed('credential tasks with the roles apart, each on its own certificate', () => {
  describe.skipIf(skip !== undefined)(`under least privilege${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let cluster: TlsCluster;
    let owner: Store;
    let emu: OAuthEmulator;
    const client = { id: 'cadenza-tasks', secret: 'tasks-secret', redirectUris: ['http://127.0.0.1/oauth/callback'] };
    const apps: Partial<Record<'api' | 'scheduler' | 'sender' | 'sync', RunningApp>> = {};
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-credential-tasks-'));
    // Every warning and error the four roles log, to find a write or a read refused on the way.
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });

    beforeAll(async () => {
      await resetMailBed([REP, PROSPECT]);
      cluster = await startTlsCluster(PORT);
      for (const r of Object.values(DB_ROLES)) await cluster.issueClient(r);
      await cluster.admin('postgres', (c) => c.query('create database cadenza'));
      owner = await openStore({ databaseUrl: cluster.url('postgres', 'cadenza'), poolSize: 2 });
      await migrate(owner);
      await cluster.admin('cadenza', (c) => applyGrants(c));
      // Google's OAuth server, emulated: the sender revokes a removed mailbox's grant there.
      emu = await startOAuthEmulator({ flavour: 'google', clients: [client], users: [{ email: 'oauth@gmail.test' }] });
      // One data folder for all: it holds the master key, which every role needs.
      const oauth = { google: { clientId: client.id, clientSecret: client.secret, discoveryBase: emu.issuer } };
      const common = { dataDir: dir, port: 0, host: '127.0.0.1', log, oauth };
      for (const role of ['api', 'scheduler', 'sender', 'sync'] as const) apps[role] = await startApp({ ...common, databaseUrl: cluster.url(DB_ROLES[role], 'cadenza'), roles: [role] });
    }, 180_000);
    afterAll(async () => {
      for (const a of Object.values(apps)) await a?.stop().catch(() => undefined);
      await owner?.close();
      await emu?.close();
      cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('the API role asks, the sender role tests the password, sends the reply once and revokes the removed grant; without a sender the API says so', async () => {
      const api = apps.api!;
      const base = api.url!;
      const setup = await fetch(`${base}/api/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ setupToken: api.setupToken!.token, email: 'owner@tasks.test', password: 'a long enough password', workspaceName: 'Tasks' }) });
      expect(setup.status, await setup.clone().text()).toBe(201);
      const me = (await setup.json()) as { workspaces: Array<{ id: string }>; csrfToken: string };
      const ws = me.workspaces[0]!.id;
      const cookie = setup.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!.split(';')[0]!;
      const call = async (method: string, path: string, body?: unknown) => {
        const r = await fetch(`${base}/api/workspaces/${ws}/${path}`, { method, headers: { cookie, 'x-csrf-token': me.csrfToken, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
        return { status: r.status, body: (await r.json()) as Record<string, unknown> };
      };

      // The API's role cannot open the credential itself: what follows goes through the sender.
      const added = await call('POST', 'mailboxes', bedMailboxBody(REP, 'pass'));
      expect(added.status, JSON.stringify(added.body)).toBe(201);
      const mailboxId = added.body.id as string;
      const apiVault = new Vault(api.store, localKeyWrapper(await openMasterKey(api.store, { dataDir: dir })));
      await expect(apiVault.get(mailboxId)).rejects.toMatchObject({ code: 'FORBIDDEN' });

      // 1. Test: the sender signs in to the bed's SMTP and IMAP with the stored password.
      const tested = await call('POST', `mailboxes/${mailboxId}/test`);
      expect(tested.status, JSON.stringify(tested.body)).toBe(200);
      expect(tested.body).toMatchObject({ ok: true, checks: [{ protocol: 'SMTP', ok: true }, { protocol: 'IMAP', ok: true }] });

      // 2. Reply from the inbox: an inbound message from the prospect, answered twice with one key.
      const inboundId = randomUUID();
      const tag = randomBytes(4).toString('hex');
      await owner.db
        .insertInto('message')
        .values({
          id: inboundId, workspace_id: ws, mailbox_id: mailboxId, enrollment_id: null, direction: 'inbound', message_id: `<in-${tag}@inbox.test>`,
          in_reply_to: null, refs: [], thread_id: null, subject: `Pricing ${tag}`, from_addr: PROSPECT, to_addrs: [REP], reply_to: [], cc_addrs: [], at: new Date(), folder: 'inbox', label: 'human_reply', action: 'reply', excerpt: 'what would it cost?',
        })
        .execute();
      const body = { text: `Tuesday at 10 works (${tag}).`, idempotencyKey: `reply-${tag}` };
      const sent = await call('POST', `inbox/messages/${inboundId}/reply`, body);
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect(sent.body).toMatchObject({ mailboxId, to: [PROSPECT], subject: `Re: Pricing ${tag}`, confirmedBy: 'server', replayed: false });
      const again = await call('POST', `inbox/messages/${inboundId}/reply`, body);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ messageId: sent.body.messageId, replayed: true });
      expect(await readInbox(PROSPECT, 'pass', sent.body.messageId as string, { waitMs: 10_000 })).toHaveLength(1);

      // 3. An OAuth mailbox removed: the API erases its credential; the revocation is the sender's.
      const oauthMailbox = randomUUID();
      await owner.db.insertInto('mailbox').values({ id: oauthMailbox, workspace_id: ws, email: 'oauth@gmail.test', provider: 'gmail', settings: JSON.stringify({ oauth: { provider: 'google', mode: 'api' } }) }).execute();
      const grant = emu.grants.newGrant(client.id, { email: 'oauth@gmail.test', sub: 'emu-oauth' }, ['https://mail.google.com/']);
      const refreshToken = emu.grants.newRefreshToken(grant);
      await apiVault.put(ws, oauthMailbox, { kind: 'oauth', accessToken: 'access', refreshToken });
      const removed = await call('DELETE', `mailboxes/${oauthMailbox}`);
      expect(removed.status, JSON.stringify(removed.body)).toBe(200);
      expect(removed.body).toMatchObject({ credentialErased: true, revocation: 'pending' });
      const revocation = () => owner.db.selectFrom('credential_task').select(['state', 'result', 'sealed']).where('kind', '=', 'revoke').where('mailbox_id', '=', oauthMailbox).executeTakeFirstOrThrow();
      const end = Date.now() + 20_000;
      while ((await revocation()).state !== 'done' && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      // The sender opened the sealed token and revoked the grant at the provider; nothing sealed is kept.
      expect(await revocation()).toEqual({ state: 'done', result: { ok: true, value: 'revoked' }, sealed: null });
      expect(emu.grants.grantOfRefreshToken(refreshToken)).toBeUndefined();
      // The API's role never reads a revocation's sealed token.
      await expect(api.store.db.selectFrom('credential_task').select('sealed').execute()).rejects.toMatchObject({ code: '42501' });

      expect(lines.filter((l) => /permission denied|42501/.test(l))).toEqual([]);

      // Without a sender process, the API answers at once, in plain words.
      await apps.sender!.stop();
      apps.sender = undefined;
      const alone = await call('POST', `mailboxes/${mailboxId}/test`);
      expect(alone.status).toBe(503);
      expect(alone.body).toMatchObject({ error: { code: 'SENDER_UNAVAILABLE', message: expect.stringMatching(/^No sender process is running/) } });
    }, 180_000);
  });
});


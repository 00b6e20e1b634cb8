import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { seededRandom } from '../../common/random.ts';
import { ensureDefaultWorkspace } from '../../workspace/workspaces.ts';
import { connectThroughEmulator } from '../../sim/emulators/oauth/connect.ts';
import { startXoauth2Dovecot, xoauth2DovecotAvailable, type XoauthDovecot } from '../../../test/mail/dovecot-xoauth2.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { mailLogin } from '../connectors/smtp-imap/login.ts';
import { withImap } from '../imap/connect.ts';
import type { ImapAccount } from '../imap/account.ts';
import { parseMailboxSettings } from '../settings.ts';
import { localKeyWrapper, Vault } from '../vault.ts';
import { OAuthClients } from './client.ts';
import { MailboxTokens } from './mailbox-tokens.ts';

/**
 * IMAP with SASL XOAUTH2 for real: imapflow signs in to a Dovecot whose oauth2 passdb asks the
 * OAuth emulator's introspection endpoint whether the token is live and meant for IMAP (imapflow
 * picks OAUTHBEARER, RFC 7628, when the server offers it beside XOAUTH2; the same token either way).
 */
const can = xoauth2DovecotAvailable();
const client = { id: 'cadenza-test', secret: 'client-secret-1', redirectUris: ['http://127.0.0.1/oauth/callback'] };
const REP = 'rep@acme.test';

describe.skipIf(!can.ok)(`IMAP XOAUTH2 against Dovecot's oauth2 passdb${can.ok ? '' : ` (skipped: ${can.why})`}`, () => {
  let store: TestStore;
  let emu: OAuthEmulator;
  let dovecot: XoauthDovecot;
  let tokens: MailboxTokens;
  let vault: Vault;
  let mailboxId: string;

  beforeAll(async () => {
    store = await freshStore('pglite');
    const random = seededRandom(31);
    const workspaceId = await ensureDefaultWorkspace(store, { clock: systemClock, random });
    emu = await startOAuthEmulator({ flavour: 'google', clients: [client], users: [{ email: REP }] });
    dovecot = await startXoauth2Dovecot({ introspectionUrl: `${emu.origin}/introspect?audience=google-imap` });
    vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    const clients = new OAuthClients({ google: { clientId: client.id, clientSecret: client.secret, discoveryBase: emu.origin } });
    tokens = new MailboxTokens({ store, vault, clients, clock: systemClock, random, backoffMs: 10, minRefreshGapMs: 500 });
    mailboxId = (await connectThroughEmulator({ store, vault, clients, clock: systemClock, random }, { workspaceId, provider: 'google', mode: 'imap' })).mailboxId;
  });
  afterAll(async () => {
    await dovecot?.close();
    await emu?.close();
    await store?.destroy();
  });

  async function account(): Promise<ImapAccount> {
    const mb = await store.db.selectFrom('mailbox').select(['id', 'email', 'settings']).where('id', '=', mailboxId).executeTakeFirstOrThrow();
    const settings = parseMailboxSettings(mb.settings);
    expect(settings.imap).toMatchObject({ host: 'imap.gmail.com', port: 993, security: 'tls' });
    const cred = await vault.get(mailboxId);
    if (!cred) throw new Error('no credential');
    // The local Dovecot in place of imap.gmail.com.
    return { endpoint: { host: '127.0.0.1', port: dovecot.port, security: 'none', allowSelfSigned: false }, ...mailLogin(mb, cred, tokens.forMailbox(mb.id)) };
  }

  it('signs in with the granted token; a token the server refuses is refreshed once; a revoked grant pauses the mailbox', async () => {
    const status = await withImap(await account(), (c) => c.status('INBOX', { messages: true }));
    expect(status).toEqual({ path: 'INBOX', messages: 0 });
    expect(emu.tokenRequests('refresh_token')).toBe(0);

    // The provider drops the access token early: Dovecot refuses it, imapflow is given a fresh one.
    const current = await tokens.accessToken(mailboxId);
    emu.grants.accessTokens.get(current)!.revoked = true;
    await expect(withImap(await account(), (c) => c.status('INBOX', { messages: true }))).resolves.toMatchObject({ messages: 0 });
    expect(emu.tokenRequests('refresh_token')).toBe(1);

    // A token for the Gmail API only (no https://mail.google.com/) is not accepted by IMAP.
    const grant = [...emu.grants.grants.values()][0]!;
    const apiOnly = emu.grants.newAccessToken(grant, ['https://www.googleapis.com/auth/gmail.readonly'], ['gmail'], 3600).token;
    const wrong: ImapAccount = { ...(await account()), auth: { kind: 'xoauth2', accessToken: async () => apiOnly } };
    await expect(withImap(wrong, async () => undefined)).rejects.toSatisfy((e) => isCadenzaError(e, 'MAILBOX_AUTH_FAILED'));

    emu.revokeUser(REP);
    // Past the guard against refreshing a token that was just minted.
    await new Promise((r) => setTimeout(r, 600));
    await expect(withImap(await account(), async () => undefined)).rejects.toSatisfy((e) => isCadenzaError(e, 'MAILBOX_AUTH_FAILED'));
    const mb = await store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', mailboxId).executeTakeFirstOrThrow();
    expect(mb).toEqual({ health: 'paused', health_reason: 'Google access was revoked or expired; reconnect the mailbox' });
  });
});

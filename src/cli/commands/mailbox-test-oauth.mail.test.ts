import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { embeddedDbDir } from '../../common/config.ts';
import { seededRandom } from '../../common/random.ts';
import { OAuthClients } from '../../mailbox/oauth/client.ts';
import { parseMailboxSettings } from '../../mailbox/settings.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { ensureDefaultWorkspace } from '../../workspace/workspaces.ts';
import { migrate } from '../../store/migrate.ts';
import { openStore } from '../../store/store.ts';
import { connectThroughEmulator } from '../../sim/emulators/oauth/connect.ts';
import { startXoauth2Dovecot, xoauth2DovecotAvailable, type XoauthDovecot } from '../../../test/mail/dovecot-xoauth2.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';

/**
 * `cadenza mailbox test` on a Google mailbox connected for IMAP with OAuth, whose stored access
 * token has expired (and been revoked by the provider): the command refreshes it through the token
 * endpoint before signing in with XOAUTH2, as the sync and the sender do, instead of reporting a
 * refused sign-in. Dovecot's oauth2 passdb asks the OAuth emulator whether a token is live.
 */
const can = xoauth2DovecotAvailable();
const root = join(import.meta.dirname, '..', '..', '..');
const client = { id: 'cadenza-cli', secret: 'client-secret-cli', redirectUris: ['http://127.0.0.1/oauth/callback'] };
const REP = 'rep@cli-oauth.test';

describe.skipIf(!can.ok)(`cadenza mailbox test with an expired OAuth token${can.ok ? '' : ` (skipped: ${can.why})`}`, () => {
  let dir: string;
  let emu: OAuthEmulator;
  let dovecot: XoauthDovecot;
  const masterKey = randomBytes(32);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-mbtest-oauth-'));
    emu = await startOAuthEmulator({ flavour: 'google', clients: [client], users: [{ email: REP }] });
    dovecot = await startXoauth2Dovecot({ introspectionUrl: `${emu.origin}/introspect?audience=google-imap` });
    const store = await openStore({ dataDir: embeddedDbDir(join(dir, 'data')) });
    try {
      await migrate(store);
      const random = seededRandom('cli-oauth');
      const workspaceId = await ensureDefaultWorkspace(store, { clock: systemClock, random });
      const vault = new Vault(store, localKeyWrapper(masterKey));
      const clients = new OAuthClients({ google: { clientId: client.id, clientSecret: client.secret, discoveryBase: emu.origin } });
      const { mailboxId } = await connectThroughEmulator({ store, vault, clients, clock: systemClock, random }, { workspaceId, provider: 'google', mode: 'imap' });
      // The local Dovecot in place of imap.gmail.com; no SMTP server to test.
      const mb = await store.db.selectFrom('mailbox').select('settings').where('id', '=', mailboxId).executeTakeFirstOrThrow();
      const settings = parseMailboxSettings(mb.settings);
      await store.db
        .updateTable('mailbox')
        .set({ settings: JSON.stringify({ ...settings, smtp: undefined, imap: { host: '127.0.0.1', port: dovecot.port, security: 'none', allowSelfSigned: false } }) })
        .where('id', '=', mailboxId)
        .execute();
      // The stored token is past its expiry, and the provider no longer takes it.
      const cred = await vault.get(mailboxId);
      if (cred?.kind !== 'oauth') throw new Error('no OAuth grant stored');
      emu.grants.accessTokens.get(cred.accessToken)!.revoked = true;
      await vault.put(workspaceId, mailboxId, { ...cred, expiresAt: Date.now() - 60_000 });
    } finally {
      await store.close();
    }
  }, 60_000);
  afterAll(async () => {
    await dovecot?.close();
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refreshes the token, then signs in (exit 0)', { timeout: 60_000 }, async () => {
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL')),
      CADENZA_MASTER_KEY: masterKey.toString('base64'),
      CADENZA_GOOGLE_CLIENT_ID: client.id,
      CADENZA_GOOGLE_CLIENT_SECRET: client.secret,
      CADENZA_GOOGLE_ISSUER: emu.origin,
    };
    // Not spawnSync: the emulator answering the CLI's token request runs in this process.
    const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [join(root, 'bin', 'cadenza.js'), '--data-dir', join(dir, 'data'), '--json', 'mailbox', 'test', REP], { cwd: dir, env, encoding: 'utf8', timeout: 50_000 }, (e, stdout, stderr) =>
        resolve({ status: e ? (typeof e.code === 'number' ? e.code : null) : 0, stdout, stderr }),
      );
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ mailbox: REP, ok: true, imap: { ok: true }, smtp: null });
    expect(emu.tokenRequests('refresh_token')).toBe(1);
  });
});

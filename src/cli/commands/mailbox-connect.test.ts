import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consent } from '../../sim/emulators/oauth/browser.ts';
import { startOAuthEmulator, type OAuthEmulator } from '../../sim/emulators/oauth/emulator.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { openStore } from '../../store/store.ts';

const root = join(import.meta.dirname, '..', '..', '..');
// Registered without a port: a loopback redirect may use any (RFC 8252 §7.3), as Microsoft and Google desktop clients allow.
const client = { id: 'cadenza-cli', secret: 'cli-secret', redirectUris: ['http://127.0.0.1/oauth/callback'] };

describe('cadenza mailbox connect (loopback redirect)', { timeout: 120_000 }, () => {
  let dir: string;
  let emu: OAuthEmulator;
  const master = randomBytes(32);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-connect-'));
    emu = await startOAuthEmulator({ flavour: 'microsoft', clients: [client], users: [{ email: 'rep@contoso.test' }] });
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the consent URL, receives the redirect on 127.0.0.1, stores the grant encrypted and prints no token', async () => {
    const child = spawn(process.execPath, [join(root, 'bin', 'cadenza.js'), '--data-dir', join(dir, 'data'), '--json', 'mailbox', 'connect', 'microsoft', '--mode', 'imap', '--email', 'rep@contoso.test'], {
      cwd: dir,
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL')),
        CADENZA_MASTER_KEY: master.toString('base64'),
        CADENZA_MICROSOFT_CLIENT_ID: client.id,
        CADENZA_MICROSOFT_CLIENT_SECRET: client.secret,
        CADENZA_MICROSOFT_LOGIN_URL: emu.origin,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const firstLine = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
        const nl = stdout.indexOf('\n');
        if (nl >= 0) resolve(stdout.slice(0, nl));
        if (stdout.startsWith('{\n')) reject(new Error(`failed: ${stdout}`));
      });
      child.on('exit', () => reject(new Error(`exited early: ${stderr}`)));
    });
    const url = new URL((JSON.parse(firstLine) as { authorizationUrl: string }).authorizationUrl);
    expect(url.origin).toBe(emu.origin);
    const redirect = new URL(url.searchParams.get('redirect_uri')!);
    expect(redirect.hostname).toBe('127.0.0.1');

    // The browser: consent, then follow the redirect to the command's listener.
    const back = await consent(url);
    const page = await fetch(back);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/rep@contoso\.test is connected/);
    expect(await exited).toBe(0);

    const result = JSON.parse(stdout.slice(stdout.indexOf('\n') + 1)) as Record<string, unknown>;
    expect(result).toMatchObject({ email: 'rep@contoso.test', provider: 'smtp_imap', mode: 'imap', created: true });
    expect(stdout + stderr).not.toMatch(/emu-rt-|emu\.|access_token|refresh_token/);

    const store = await openStore({ dataDir: join(dir, 'data', 'db') });
    try {
      const cred = await new Vault(store, localKeyWrapper(master)).get(String(result.id));
      expect(cred).toMatchObject({ kind: 'oauth', refreshToken: expect.stringMatching(/^emu-rt-/) });
    } finally {
      await store.close();
    }
  });
});

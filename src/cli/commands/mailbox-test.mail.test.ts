import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeMailBed } from '../../../test/mail/describe-mail-bed.ts';
import { mailBed } from '../../../test/mail/mailbed.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describeMailBed('cadenza mailbox test', () => {
  let dir: string;
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL')), CADENZA_MASTER_KEY: randomBytes(32).toString('base64') };
  const cadenza = (args: string[], input?: string) => {
    const r = spawnSync(process.execPath, [join(root, 'bin', 'cadenza.js'), '--data-dir', join(dir, 'data'), ...args], { cwd: dir, env, input, encoding: 'utf8', timeout: 60_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const add = (email: string, password: string, ...extra: string[]) =>
    cadenza(['mailbox', 'add', email, ...extra, '--imap-host', mailBed.host, '--imap-port', String(mailBed.imapPort), '--imap-security', 'none', '--smtp-host', mailBed.host, '--smtp-port', String(mailBed.submissionPort), '--smtp-security', 'starttls', '--allow-self-signed', '--password-stdin'], password);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-mbtest-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints what works (exit 0), or each server\'s problem and what to do (exit 1), in text and --json', { timeout: 120_000 }, () => {
    expect(add('sync6@inbox.test', 'pass').code).toBe(0);
    // Adding tests the servers first, and this one's IMAP is refused: it is saved untested, then tested.
    const refused = add('noimap@inbox.test', 'pass');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/IMAP/);
    expect(add('noimap@inbox.test', 'pass', '--no-verify').code).toBe(0);

    const good = cadenza(['--json', 'mailbox', 'test', 'sync6@inbox.test']);
    expect(good.code).toBe(0);
    const report = JSON.parse(good.stdout);
    expect(report).toMatchObject({ mailbox: 'sync6@inbox.test', ok: true, imap: { ok: true, folders: { sent: 'Sent', junk: 'Junk', trash: 'Trash' }, features: { idle: true, qresync: true } }, smtp: { ok: true } });

    const bad = cadenza(['mailbox', 'test', 'noimap@inbox.test']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('IMAP: imap_disabled');
    expect(bad.stdout).toContain('what to do:');
    expect(bad.stdout).not.toContain('pass\n');

    const missing = cadenza(['mailbox', 'test', 'nobody@inbox.test']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("no mailbox 'nobody@inbox.test'");
  });
});

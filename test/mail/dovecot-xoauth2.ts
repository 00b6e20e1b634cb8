import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private Dovecot (its own config, directories and port; the shared mail bed is not touched)
 * whose only sign-in is SASL XOAUTH2/OAUTHBEARER checked by Dovecot's oauth2 passdb against a
 * token introspection URL (RFC 7662): the OAuth emulator's /introspect. This is how an IMAP server
 * that accepts OAuth tokens behaves, so the real imapflow XOAUTH2 login runs against it.
 *
 * Needs the dovecot binary and root (Dovecot switches to the vmail user for mail access), as the
 * mail bed does; `available()` says whether this machine can.
 */
export interface XoauthDovecot {
  port: number;
  close(): Promise<void>;
}

export function xoauth2DovecotAvailable(): { ok: true } | { ok: false; why: string } {
  if (process.getuid?.() !== 0) return { ok: false, why: 'needs root (as the mail bed)' };
  try {
    execFileSync('dovecot', ['--version'], { stdio: 'ignore' });
    execFileSync('id', ['vmail'], { stdio: 'ignore' });
  } catch {
    return { ok: false, why: 'dovecot or the vmail user is missing (run test/mail/mailbed.sh start once)' };
  }
  return { ok: true };
}

export async function startXoauth2Dovecot(opts: { introspectionUrl: string }): Promise<XoauthDovecot> {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-dc-oauth-'));
  // mkdtemp makes it 0700; the vmail user must reach the mail folder below it.
  chmodSync(dir, 0o755);
  const uid = Number(execFileSync('id', ['-u', 'vmail'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'vmail'], { encoding: 'utf8' }).trim());
  const mail = join(dir, 'mail');
  mkdirSync(mail);
  chownSync(mail, uid, gid);
  const port = await freePort();
  const name = `cadenza-oauth-${port}`;
  writeFileSync(
    join(dir, 'oauth2.conf.ext'),
    [
      `introspection_mode = post`,
      `introspection_url = ${opts.introspectionUrl}`,
      `force_introspection = yes`,
      `username_attribute = username`,
      `active_attribute = active`,
      `active_value = true`,
      '',
    ].join('\n'),
  );
  const conf = join(dir, 'dovecot.conf');
  writeFileSync(
    conf,
    `instance_name = ${name}
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = xoauth2 oauthbearer
auth_failure_delay = 0
# No growing auth penalty for the refusals the tests cause on purpose (not applied to trusted networks).
login_trusted_networks = 127.0.0.0/8
first_valid_uid = ${uid}
mail_uid = vmail
mail_gid = vmail
mail_location = maildir:~/Maildir
passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = ${dir}/oauth2.conf.ext
}
userdb {
  driver = static
  args = uid=vmail gid=vmail home=${mail}/%n
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
`,
  );
  const child: ChildProcess = spawn('dovecot', ['-F', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) {
      await close();
      throw new Error(`dovecot exited: ${stderr}`);
    }
    if (await accepts(port)) break;
    if (i > 100) {
      await close();
      throw new Error('dovecot did not listen within 5 s');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, close };
}

/** A port nothing listens on now, for a server that must know its URL before it starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

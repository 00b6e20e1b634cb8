import type { Command } from 'commander';
import type { Verification } from '../../mailbox/verification.ts';
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { isValidZone } from '../../calendar/index.ts';
import { deps, globals, masterKey, nudgeRunning, output, table, withStore } from '../context.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { defaultPort, parseMailboxSettings } from '../../mailbox/settings.ts';
import { registerConnect } from './mailbox-connect.ts';
import { registerTest } from './mailbox-test.ts';
import { addPacingOptions, describePacing, patchFromFlags, type PacingFlags } from '../pacing-flags.ts';
import { patchMailboxPacing, readMailboxPacing } from '../../mailbox/pacing/pacing-settings.ts';
import { effectiveCaps } from '../../mailbox/pacing/mailbox.ts';
import { checkMailEndpoints } from '../../mailbox/mail-hosts.ts';
import { listMailboxRows } from '../../mailbox/sql/mailbox-list.ts';
import { insertMailbox, mailboxIdByEmail } from '../../mailbox/sql/mailboxes.ts';

const addSchema = z.object({
  email: z.string().email(),
  provider: z.enum(['smtp_imap', 'gmail', 'graph']),
  zone: z.string().optional(),
});

interface AddOptions extends PacingFlags {
  workspace?: string;
  provider: string;
  verify?: boolean;
  zone?: string;
  name?: string;
  smtpHost?: string;
  smtpPort?: string;
  smtpSecurity: string;
  imapHost?: string;
  imapPort?: string;
  imapSecurity: string;
  username?: string;
  passwordStdin?: boolean;
  serverSavesSent: boolean;
  allowSelfSigned?: boolean;
}

/** The password: from stdin (--password-stdin) or CADENZA_MAILBOX_PASSWORD, never from an argument (it would sit in shell history and ps). */
async function readPassword(o: AddOptions): Promise<string | undefined> {
  if (o.passwordStdin) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    const pw = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
    if (!pw) throw cadenzaError('INVALID_INPUT', '--password-stdin: nothing was read from standard input');
    return pw;
  }
  return process.env.CADENZA_MAILBOX_PASSWORD || undefined;
}

function connectionSettings(o: AddOptions) {
  const sec = (v: string) => {
    if (v !== 'tls' && v !== 'starttls' && v !== 'none') throw cadenzaError('INVALID_INPUT', `security is tls, starttls or none, got '${v}'`);
    return v;
  };
  const settings: Record<string, unknown> = { serverSavesSent: o.serverSavesSent };
  if (o.smtpHost) {
    const security = sec(o.smtpSecurity);
    settings.smtp = { host: o.smtpHost, port: o.smtpPort ? Number(o.smtpPort) : defaultPort('smtp', security), security, allowSelfSigned: !!o.allowSelfSigned };
  }
  if (o.imapHost) {
    const security = sec(o.imapSecurity);
    settings.imap = { host: o.imapHost, port: o.imapPort ? Number(o.imapPort) : defaultPort('imap', security), security, allowSelfSigned: !!o.allowSelfSigned };
  }
  return parseMailboxSettings(settings);
}

export function register(program: Command): void {
  const mb = program.command('mailbox');
  registerConnect(mb);
  registerTest(mb);
  addPacingOptions(
    mb
      .command('set <email>')
      .description("change a mailbox's pacing (caps, ramp, gap, hours, days, lunch, human timing); without flags, show what is in force and where each setting comes from")
      .option('--workspace <id|name>', 'workspace (default: the only one)'),
  ).action(async (email: string, o: PacingFlags & { workspace?: string }, cmd: Command) => {
    const g = globals(cmd);
    const patch = patchFromFlags(o);
    await withStore(g, async (store) => {
      const w = await resolveWorkspace(store, o.workspace);
      const id = await mailboxIdByEmail(store.db, w.id, email);
      if (!id) throw cadenzaError('NOT_FOUND', `no mailbox ${email} in workspace ${w.name}`);
      const view = patch ? await patchMailboxPacing(store, w.id, id, patch) : await readMailboxPacing(store.db, w.id, id);
      if (patch) await nudgeRunning(store, 'mailboxes');
      output(g, view, () => `${email.toLowerCase()}${patch ? ' updated' : ''}:\n${describePacing(view)}`);
    });
  });
  mb.command('list')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .action(async (o: { workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const { workspace: ws, mailboxes } = await listMailboxRows(store.db, w.id);
        // The cap in force: the mailbox's own, else the workspace's default (`mailbox set` shows all of its pacing).
        const rows = mailboxes.map((m) => ({ id: m.id, email: m.email, provider: m.provider, daily_cap: effectiveCaps(m, ws.settings).dailyCap, health: m.health, time_zone: m.time_zone }));
        output(g, rows, () => table(rows));
      });
    });
  const add = mb
    .command('add <email>')
    .description('register a mailbox (pacing flags as for `mailbox set`; unset ones follow the workspace: `cadenza workspace pacing`)')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--provider <p>', 'smtp_imap, gmail or graph', 'smtp_imap')
    .option('--zone <iana>', "the mailbox's time zone (fallback for leads without one)")
    .option('--name <display name>', 'the name recipients see')
    .option('--smtp-host <host>', 'SMTP submission server')
    .option('--smtp-port <n>', 'SMTP port (default 587, or 465 with --smtp-security tls)')
    .option('--smtp-security <mode>', 'tls, starttls or none', 'starttls')
    .option('--imap-host <host>', 'IMAP server (replies, bounces and the Sent folder)')
    .option('--imap-port <n>', 'IMAP port (default 143, or 993 with --imap-security tls)')
    .option('--imap-security <mode>', 'tls, starttls or none', 'tls')
    .option('--username <user>', 'login name (default: the address)')
    .option('--password-stdin', 'read the password or app password from standard input (or set CADENZA_MAILBOX_PASSWORD)')
    .option('--no-server-saves-sent', 'the SMTP server does not file sent mail into Sent: Cadenza appends a copy over IMAP')
    .option('--allow-self-signed', "accept the servers' self-signed certificates")
    .option('--no-verify', 'save it without testing the SMTP and IMAP sign-in first (it is then shown as not verified until `cadenza mailbox test` passes)');
  addPacingOptions(add).action(async (email: string, o: AddOptions, cmd: Command) => {
      const g = globals(cmd);
      const patch = patchFromFlags(o);
      const r = addSchema.safeParse({ email, provider: o.provider, zone: o.zone });
      if (!r.success) throw cadenzaError('INVALID_INPUT', r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      if (r.data.zone && !isValidZone(r.data.zone)) throw cadenzaError('UNKNOWN_TIME_ZONE', `unknown time zone '${r.data.zone}'`);
      const settings = connectionSettings(o);
      await checkMailEndpoints([settings.smtp, settings.imap]);
      const password = await readPassword(o);
      if (r.data.provider === 'smtp_imap' && settings.smtp && !password) throw cadenzaError('INVALID_INPUT', 'an SMTP mailbox needs its password: --password-stdin, or CADENZA_MAILBOX_PASSWORD');
      // A mailbox that cannot connect is refused before it is saved, in the words of `mailbox test`.
      let verification: Verification | null = null;
      if (r.data.provider === 'smtp_imap' && password && (settings.smtp || settings.imap)) {
        const { verifyBeforeAdding } = await import('../../mailbox/verify-mailbox.ts');
        verification = await verifyBeforeAdding(
          { verify: o.verify !== false, username: o.username ?? r.data.email, auth: { kind: 'password', password }, ...(settings.imap ? { imap: settings.imap } : {}), ...(settings.smtp ? { smtp: settings.smtp } : {}) },
          deps.clock.now(),
        );
      }
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const id = newId(deps.clock.now(), deps.random);
        const vault = new Vault(store, localKeyWrapper(await masterKey(g, store)));
        await store.db.transaction().execute(async (tx) => {
          await insertMailbox(tx, { id, workspace_id: w.id, email: r.data.email.toLowerCase(), display_name: o.name ?? null, provider: r.data.provider, time_zone: r.data.zone ?? null, settings: JSON.stringify(verification ? { ...settings, verification } : settings) });
          if (password) await vault.put(w.id, id, { kind: 'password', username: o.username ?? r.data.email, password }, tx);
        });
        if (patch) await patchMailboxPacing(store, w.id, id, patch);
        await nudgeRunning(store, 'mailboxes');
        const tested = verification?.state === 'verified' ? '; connection tested' : verification?.state === 'skipped' ? '; not verified (test skipped: run `cadenza mailbox test`)' : '';
        output(g, { id, email: r.data.email.toLowerCase(), credentials: password ? 'stored encrypted' : 'none', verification: verification?.state ?? null }, () => `mailbox ${r.data.email} added (${id})${password ? '; password stored encrypted' : ''}${tested}`);
      });
    });
}

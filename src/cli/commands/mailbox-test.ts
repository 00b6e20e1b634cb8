import type { Command } from 'commander';
import { recordVerification } from '../../mailbox/verify-mailbox.ts';
import { loadConfig } from '../../common/config.ts';
import { cadenzaError } from '../../common/errors.ts';
import { testConnection, type ConnectionReport, type ImapCheck, type SmtpCheck } from '../../mailbox/imap/test-connection.ts';
import { OAuthClients, oauthSettingsFrom } from '../../mailbox/oauth/client.ts';
import { MailboxTokens } from '../../mailbox/oauth/mailbox-tokens.ts';
import { mailLogin } from '../../mailbox/connectors/smtp-imap/login.ts';
import { parseMailboxSettings } from '../../mailbox/settings.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { deps, globals, masterKey, output, withStore } from '../context.ts';

/**
 * `cadenza mailbox test <email|id>`: signs in to an SMTP/IMAP mailbox's servers with its stored
 * credential and prints what works (capabilities, Sent/Junk/Trash) or, for each server, what is
 * wrong and what to do about it (mailbox/imap/test-connection.ts). Exit status 1 when a server
 * failed. An OAuth mailbox over IMAP signs in with XOAUTH2 and a token from MailboxTokens, which
 * refreshes an expired one first, as the sync and the sender do (a dead grant is reported as such).
 */
export function registerTest(mb: Command): void {
  mb.command('test <mailbox>')
    .description("sign in to a mailbox's IMAP and SMTP servers (by address or id) and report what works and what does not")
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--timeout <seconds>', 'for each phase (connect, greeting, each command)', '10')
    .action(async (ref: string, o: { workspace?: string; timeout: string }, cmd: Command) => {
      const g = globals(cmd);
      const timeoutMs = Math.round(Number(o.timeout) * 1000);
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw cadenzaError('INVALID_INPUT', `--timeout must be a positive number of seconds, got '${o.timeout}'`);
      const { email, report } = await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const row = await store.db
          .selectFrom('mailbox')
          .select(['id', 'email', 'provider', 'settings'])
          .where('workspace_id', '=', w.id)
          // mailbox.id is a uuid column: comparing it with an address would be a type error.
          .where(uuidRe.test(ref) ? 'id' : 'email', '=', ref.toLowerCase())
          .executeTakeFirst();
        if (!row) throw cadenzaError('NOT_FOUND', `no mailbox '${ref}' in workspace ${w.name}`);
        const settings = parseMailboxSettings(row.settings);
        if (!settings.imap && !settings.smtp) {
          throw cadenzaError('INVALID_INPUT', `mailbox ${row.email} (${row.provider}) has no IMAP or SMTP server to test; it syncs and sends through the provider's API`);
        }
        const vault = new Vault(store, localKeyWrapper(await masterKey(g, store)));
        const credential = await vault.get(row.id);
        if (!credential) throw cadenzaError('INVALID_INPUT', `mailbox ${row.email} has no stored credential (add it with --password-stdin, or connect it)`);
        const clients = new OAuthClients(oauthSettingsFrom(loadConfig()), { clock: deps.clock });
        const tokens = new MailboxTokens({ store, vault, clients, clock: deps.clock, random: deps.random });
        const { username, auth } = mailLogin(row, credential, credential.kind === 'oauth' ? tokens.forMailbox(row.id) : undefined);
        const r = await testConnection({ username, auth, timeoutMs, ...(settings.imap ? { imap: settings.imap } : {}), ...(settings.smtp ? { smtp: settings.smtp } : {}) });
        await recordVerification(store.db, row.id, r, deps.clock.now());
        return { email: row.email, report: r };
      });
      output(g, { mailbox: email, ...report }, () => human(email, report));
      if (!report.ok) process.exitCode = 1;
    });
}

const uuidRe = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function human(email: string, r: ConnectionReport): string {
  const lines = [`${email}: ${r.ok ? 'OK' : 'FAILED'}`];
  const section = (name: string, c: ImapCheck | SmtpCheck | null, ok: (c: Extract<ImapCheck | SmtpCheck, { ok: true }>) => string[]) => {
    if (!c) return;
    if (!c.ok) {
      lines.push(`  ${name}: ${c.problem.kind} — ${c.problem.message}`, `    what to do: ${c.problem.hint}`, `    server said: ${c.problem.detail}`);
      return;
    }
    lines.push(`  ${name}: OK (${c.tookMs} ms)`, ...ok(c).map((l) => `    ${l}`), ...c.warnings.map((w) => `    warning: ${w}`));
  };
  section('IMAP', r.imap, (c) => {
    const i = c as Extract<ImapCheck, { ok: true }>;
    const f = i.features;
    const yes = (b: boolean) => (b ? 'yes' : 'no');
    return [
      `IDLE ${yes(f.idle)}, CONDSTORE ${yes(f.condstore)}, QRESYNC ${yes(f.qresync)}, SPECIAL-USE ${yes(f.specialUse)}, MOVE ${yes(f.move)}, UIDPLUS ${yes(f.uidplus)}`,
      `folders: Sent ${i.folders.sent ?? '(none)'}, Junk ${i.folders.junk ?? '(none)'}, Trash ${i.folders.trash ?? '(none)'}`,
    ];
  });
  section('SMTP', r.smtp, (c) => {
    const s = c as Extract<SmtpCheck, { ok: true }>;
    return [`${s.tls ? 'TLS' : 'no TLS'}, AUTH ${s.authMechanisms.join(' ') || '(none listed)'}${s.maxSize ? `, max message ${s.maxSize} bytes` : ''}`];
  });
  return lines.join('\n');
}

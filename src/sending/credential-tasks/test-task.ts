import { cadenzaError } from '../../common/errors.ts';
import { testConnection } from '../../mailbox/imap/test-connection.ts';
import { parseMailboxSettings } from '../../mailbox/settings.ts';
import { findMailbox } from '../../mailbox/sql/mailboxes.ts';
import { checkLines, recordVerification, type CheckLine } from '../../mailbox/verify-mailbox.ts';
import type { TaskContext } from './task-context.ts';

export interface ConnectionTestAnswer {
  ok: boolean;
  checks: CheckLine[];
}

/**
 * "Test" on a mailbox: sign in to its SMTP and IMAP servers with its stored password and say what
 * works; the result becomes the mailbox's verification (a skipped test made good, a failure shown).
 */
export async function runConnectionTest(c: TaskContext, t: { workspaceId: string; mailboxId: string }): Promise<ConnectionTestAnswer> {
  const row = await findMailbox(c.store.db, t.workspaceId, t.mailboxId);
  if (!row) throw cadenzaError('NOT_FOUND', 'no such mailbox');
  const settings = parseMailboxSettings(row.settings);
  const credential = await c.vault.get(row.id);
  if (!credential || credential.kind !== 'password') {
    throw cadenzaError('INVALID_INPUT', `mailbox ${row.email} has no stored password to test with (OAuth mailboxes are tested with \`cadenza mailbox test\`)`);
  }
  const r = await testConnection({
    username: credential.username || row.email,
    auth: { kind: 'password', password: credential.password },
    ...(settings.imap ? { imap: settings.imap } : {}),
    ...(settings.smtp ? { smtp: settings.smtp } : {}),
  });
  await recordVerification(c.store.db, row.id, r, c.clock.now());
  return { ok: r.ok, checks: checkLines(r) };
}

import { sql } from 'kysely';
import { cadenzaError } from '../common/errors.ts';
import type { Db } from '../store/store.ts';
import { testConnection, type ConnectionReport, type ConnectionTestInput, type ImapCheck, type SmtpCheck } from './imap/test-connection.ts';
import type { Verification } from './verification.ts';

/** One line per server tested: what works, or what is wrong and what to do (the API's ConnectionReport). */
export interface CheckLine {
  protocol: 'SMTP' | 'IMAP';
  ok: boolean;
  message: string;
  /** What the server or the socket said, for the disclosure behind the message. */
  detail: string | null;
}

export function checkLines(r: ConnectionReport): CheckLine[] {
  const line = (protocol: CheckLine['protocol'], c: ImapCheck | SmtpCheck | null): CheckLine[] => {
    if (!c) return [];
    if (c.ok) return [{ protocol, ok: true, message: `OK in ${c.tookMs} ms${c.warnings.length ? `; ${c.warnings.join('; ')}` : ''}`, detail: null }];
    return [{ protocol, ok: false, message: `${c.problem.message}. ${c.problem.hint}`, detail: c.problem.detail || null }];
  };
  return [...line('SMTP', r.smtp), ...line('IMAP', r.imap)];
}

/** The verification record a test leaves on the mailbox. */
export function verificationFrom(r: ConnectionReport, now: number): Verification {
  const at = new Date(now).toISOString();
  if (r.ok) return { state: 'verified', at };
  return { state: 'failed', at, problem: checkLines(r).filter((c) => !c.ok).map((c) => `${c.protocol}: ${c.message}`).join(' ') };
}

/**
 * Tests a mailbox about to be added, before anything is saved: a mailbox that cannot connect is
 * refused with what is wrong (the same words as "Test"), so it never sits as healthy while its
 * enrollments stall. `verify: false` skips the test and records the mailbox as not verified.
 */
export async function verifyBeforeAdding(input: ConnectionTestInput & { verify: boolean }, now: number, test: (i: ConnectionTestInput) => Promise<ConnectionReport> = testConnection): Promise<Verification> {
  if (!input.verify) return { state: 'skipped', at: new Date(now).toISOString() };
  const { verify: _v, ...rest } = input;
  const r = await test(rest);
  if (r.ok) return verificationFrom(r, now);
  const lines = checkLines(r);
  const auth = [r.smtp, r.imap].some((c) => c && !c.ok && c.problem.kind === 'auth_failed');
  const e = cadenzaError(
    auth ? 'MAILBOX_AUTH_FAILED' : 'MAILBOX_UNAVAILABLE',
    `the mailbox was not added: ${lines.filter((c) => !c.ok).map((c) => `${c.protocol}: ${c.message}`).join(' ')} (to add it anyway, untested, skip the test)`,
    { checks: lines },
  );
  // A 502 about the person's own mail server is said in the domain's words (api/http/errors.ts).
  throw Object.assign(e, { userFacing: true });
}

/** Stores a test's result as the mailbox's verification (a skipped test made good, a failure shown). */
export async function recordVerification(db: Db, mailboxId: string, r: ConnectionReport, now: number): Promise<void> {
  const v = verificationFrom(r, now);
  await sql`update mailbox set settings = jsonb_set(coalesce(settings, '{}'::jsonb), '{verification}', ${JSON.stringify(v)}::jsonb) where id = ${mailboxId}`.execute(db);
}

import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ImapFlow } from 'imapflow';
import type { Endpoint } from '../../src/mailbox/settings.ts';

/**
 * The real mail test bed (Postfix + Dovecot on loopback, test/mail/mailbed.sh) for tests:
 *
 *   startMailBed()                  starts it if needed (idempotent, ~0.2 s when it runs already)
 *   resetMailBed(users?)            empties the given users' folders (default: all, and the queue)
 *   readInbox(user, pass, id, o?)   waits for messages with that Message-ID in a folder, returns them
 *   countByMessageId(...)           how many copies are there now
 *
 * Tests isolate by Message-ID (each test makes its own), so files may run in parallel against one
 * bed; resetMailBed() with no argument empties everyone's folders and is for a test that owns the
 * whole bed.
 *
 * Availability: in CI (CI=true) the bed must come up, or the mail tests fail loudly. Locally they
 * skip, with the reason, only when Postfix/Dovecot are not installed (`sudo test/mail/mailbed.sh`
 * installs and starts them).
 */

export const MAILBED_SCRIPT = fileURLToPath(new URL('./mailbed.sh', import.meta.url));

export const mailBed = {
  host: '127.0.0.1',
  submissionPort: 10587,
  injectPort: 10025,
  imapPort: 10143,
  /** Every delivered message in Sent, by the server (sender_bcc_maps → user+Sent → LMTP → Sent). */
  alice: { user: 'alice@example.test', pass: 'alicepass' },
  /** No server-side Sent copy: the client must APPEND (serverSavesSent = false). */
  bob: { user: 'bob@example.test', pass: 'bobpass' },
  prospects: [1, 2, 3, 4, 5].map((n) => ({ user: `p${n}@prospects.test`, pass: 'pass' })),
  /** Accepted at RCPT, bounced by LMTP afterwards: a DSN goes to the sender. */
  lateBounceDomain: 'bounce.test',
  /** idle00001..idle10000@idle.test (password "pass"): the IDLE benchmark's own mailboxes (idleUser). */
  idleUsers: 10_000,
} as const;

/** The i-th (1-based) of the bed's IDLE benchmark mailboxes: idle00001@idle.test …, password "pass". */
export function idleUser(i: number): string {
  if (!Number.isInteger(i) || i < 1 || i > mailBed.idleUsers) throw new Error(`the bed has idle users 1..${mailBed.idleUsers} (MAILBED_IDLE_USERS in mailbed.sh), not ${i}`);
  return `idle${String(i).padStart(5, '0')}@idle.test`;
}

/** mailbox.settings-style endpoints of the bed. STARTTLS with the bed's self-signed certificate, or plain. */
export function bedEndpoint(kind: 'smtp' | 'imap', security: Endpoint['security'] = kind === 'smtp' ? 'starttls' : 'none'): Endpoint {
  return { host: mailBed.host, port: kind === 'smtp' ? mailBed.submissionPort : mailBed.imapPort, security, allowSelfSigned: true };
}

/**
 * The POST …/mailboxes body that connects a bed user sending at once: any day, any hour, no ramp and
 * no human-like pickup delay, so that a test's first send never waits for a working day.
 */
export function bedMailboxBody(email: string, password: string) {
  return {
    email,
    password,
    dailyCap: 50,
    rampUp: false,
    timeZone: 'UTC',
    smtp: { host: mailBed.host, port: mailBed.submissionPort, security: 'starttls', allowSelfSigned: true },
    imap: { host: mailBed.host, port: mailBed.imapPort, security: 'none' },
    workingHours: { workDays: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '23:59', humanTiming: false },
  };
}

const run = promisify(execFile);

function packagesInstalled(): boolean {
  try {
    execFileSync('dpkg', ['-s', 'postfix', 'dovecot-imapd', 'dovecot-lmtpd'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the mail tests must skip, or null when they must run. Synchronous, for describe.skipIf at
 * collection time. Never skips in CI.
 */
export function mailBedSkipReason(): string | null {
  if (process.env.CI === 'true') return null;
  if (packagesInstalled()) return null;
  return 'mail test bed: Postfix/Dovecot are not installed; run `sudo test/mail/mailbed.sh` once to install and start them (CI installs them itself)';
}

let started: Promise<void> | null = null;

/** Starts the bed (or finds it running). Throws with the script's output when it cannot. */
export function startMailBed(): Promise<void> {
  started ??= (async () => {
    if (process.getuid?.() !== 0) {
      // Without root the script can neither install nor (re)configure; a bed started earlier by
      // root (sudo test/mail/mailbed.sh) is fine as it is.
      try {
        await run('bash', [MAILBED_SCRIPT, 'status'], { timeout: 30_000 });
        return;
      } catch {
        started = null;
        throw new Error('mail test bed is not running, and starting it needs root: sudo test/mail/mailbed.sh');
      }
    }
    try {
      await run('bash', [MAILBED_SCRIPT, 'start'], { timeout: 300_000 });
    } catch (e) {
      started = null;
      const err = e as { stdout?: string; stderr?: string; message: string };
      throw new Error(`mail test bed did not start: ${(err.stderr || err.stdout || err.message).trim().slice(-2000)}`);
    }
  })();
  return started;
}

export async function resetMailBed(users: string[] = []): Promise<void> {
  await run('bash', [MAILBED_SCRIPT, 'reset', ...users], { timeout: 60_000 });
}

export interface BedMessage {
  uid: number;
  folder: string;
  /** The message as stored (the receiving servers' trace headers on top). */
  source: Buffer;
  internalDate: Date | null;
  flags: string[];
}

async function withClient<T>(user: string, pass: string, fn: (c: ImapFlow) => Promise<T>): Promise<T> {
  const c = new ImapFlow({ host: mailBed.host, port: mailBed.imapPort, secure: false, doSTARTTLS: false, auth: { user, pass }, logger: false, disableAutoIdle: true });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.logout().catch(() => c.close());
  }
}

async function fetchById(c: ImapFlow, folder: string, messageId: string): Promise<BedMessage[]> {
  const lock = await c.getMailboxLock(folder, { readOnly: true });
  try {
    const uids = await c.search({ header: { 'message-id': messageId } }, { uid: true });
    if (!uids || uids.length === 0) return [];
    const out: BedMessage[] = [];
    for await (const m of c.fetch(uids, { uid: true, source: true, envelope: true, internalDate: true, flags: true }, { uid: true })) {
      if (m.envelope?.messageId !== messageId) continue;
      out.push({ uid: m.uid, folder, source: m.source ?? Buffer.alloc(0), internalDate: m.internalDate ? new Date(m.internalDate) : null, flags: [...(m.flags ?? [])] });
    }
    return out;
  } finally {
    lock.release();
  }
}

/** How many messages with exactly this Message-ID are in the folder now. */
export async function countByMessageId(user: string, pass: string, messageId: string, folder = 'INBOX'): Promise<number> {
  return withClient(user, pass, async (c) => (await fetchById(c, folder, messageId)).length);
}

/**
 * Waits (polling every 50 ms, at most waitMs) until the folder holds at least `atLeast` messages
 * with this Message-ID, and returns them all; returns what is there (maybe []) when time runs out.
 * Delivery through Postfix and LMTP takes 100–300 ms here.
 */
export async function readInbox(
  user: string,
  pass: string,
  messageId: string,
  opts: { folder?: string; atLeast?: number; waitMs?: number } = {},
): Promise<BedMessage[]> {
  const folder = opts.folder ?? 'INBOX';
  const atLeast = opts.atLeast ?? 1;
  const until = Date.now() + (opts.waitMs ?? 5_000);
  return withClient(user, pass, async (c) => {
    for (;;) {
      const found = await fetchById(c, folder, messageId);
      if (found.length >= atLeast || Date.now() >= until) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
}

/** The DSNs in the user's INBOX that quote this Message-ID (SEARCH TEXT: Dovecot's BODY search skips attached headers). */
export async function readBounces(user: string, pass: string, originalMessageId: string, waitMs = 5_000): Promise<BedMessage[]> {
  const until = Date.now() + waitMs;
  return withClient(user, pass, async (c) => {
    for (;;) {
      const lock = await c.getMailboxLock('INBOX', { readOnly: true });
      try {
        const uids = await c.search({ text: originalMessageId, header: { 'content-type': 'report-type=delivery-status' } }, { uid: true });
        if (uids && uids.length > 0) {
          const out: BedMessage[] = [];
          for await (const m of c.fetch(uids, { uid: true, source: true, internalDate: true, flags: true }, { uid: true })) {
            out.push({ uid: m.uid, folder: 'INBOX', source: m.source ?? Buffer.alloc(0), internalDate: m.internalDate ? new Date(m.internalDate) : null, flags: [...(m.flags ?? [])] });
          }
          return out;
        }
      } finally {
        lock.release();
      }
      if (Date.now() >= until) return [];
      await new Promise((r) => setTimeout(r, 50));
    }
  });
}

import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { composeEmail } from '../../src/sending/compose/compose.ts';
import { dkimRecordName, dkimTxtValue, generateDkimKey, type DkimKey } from '../../src/sending/compose/dkim.ts';
import { startTestDnsServer, type TestDnsServer } from '../dns-server.ts';
import { trackingLinks } from '../../src/sending/compose/tracking.ts';
import { imapFolderActions } from '../../src/mailbox/connectors/smtp-imap/folder-actions.ts';
import { imapMessageKey } from '../../src/mailbox/imap/message-key.ts';
import type { ImapAccount } from '../../src/mailbox/imap/account.ts';

/**
 * The spam-filter bed (test/mail/filterbed.sh: Postfix MX → rspamd milter → Dovecot Sieve, Junk
 * by score) for tests and the placement benchmark:
 *
 *   startFilterBed()                  starts it if needed (~0.1 s when it already runs)
 *   deliver(raw, from, to)            hands a message to its MX (127.0.0.1:10027), as a sending MTA would
 *   placeOf(user, messageId)          where it landed: INBOX or Junk, with rspamd's X-Spam-Status
 *   measurePlacement(...)             composes N emails per kind with Cadenza's composer, delivers
 *                                     them, counts INBOX, rescues Junk by IMAP MOVE, counts again
 *
 * Users junk1..junk20@filtered.test (password "pass"): a test file or benchmark takes its own.
 */

export const FILTERBED_SCRIPT = fileURLToPath(new URL('./filterbed.sh', import.meta.url));

export const filterBed = {
  host: '127.0.0.1',
  mxPort: 10027,
  imapPort: 10144,
  /** rspamd's resolver (filterbed.sh RSPAMD_DNS_PORT): a test's DNS server here answers its lookups. */
  dnsPort: 10053,
  /** rspamd's scanner (HTTP /checkv2): the content check's CADENZA_RSPAMD_URL on the bed. */
  scannerUrl: 'http://127.0.0.1:10333',
  user: (n: number) => ({ user: `junk${n}@filtered.test`, pass: 'pass' }),
} as const;

const run = promisify(execFile);

function installed(): boolean {
  try {
    execFileSync('dpkg', ['-s', 'rspamd', 'dovecot-sieve', 'postfix', 'dovecot-imapd', 'dovecot-lmtpd'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Why filter-bed tests must skip, or null; never skips in CI (.ci/run starts the bed). */
export function filterBedSkipReason(): string | null {
  if (process.env.CI === 'true' || installed()) return null;
  return 'spam-filter bed: rspamd/dovecot-sieve are not installed; run `sudo test/mail/filterbed.sh` once (CI installs them itself)';
}

let started: Promise<void> | null = null;
export function startFilterBed(): Promise<void> {
  started ??= (async () => {
    try {
      await run('bash', [FILTERBED_SCRIPT, process.getuid?.() === 0 ? 'start' : 'status'], { timeout: 300_000 });
    } catch (e) {
      started = null;
      const err = e as { stdout?: string; stderr?: string; message: string };
      throw new Error(`spam-filter bed did not start: ${(err.stderr || err.stdout || err.message).trim().slice(-2000)}`);
    }
  })();
  return started;
}

/** Empties these filter-bed users' folders (a test's own users, at its start). */
export async function resetFilterBed(users: number[]): Promise<void> {
  await run('bash', [FILTERBED_SCRIPT, 'reset', ...users.map((n) => filterBed.user(n).user)], { timeout: 60_000 });
}

export function imapAccount(n: number): ImapAccount {
  const u = filterBed.user(n);
  return { endpoint: { host: filterBed.host, port: filterBed.imapPort, security: 'none', allowSelfSigned: false }, username: u.user, auth: { kind: 'password', password: u.pass } };
}

/** Hands a message to the filter bed's MX; resolves once Postfix accepted it (after the milter's verdict). */
export async function deliver(raw: Buffer, from: string, to: string): Promise<void> {
  const t = nodemailer.createTransport({ host: filterBed.host, port: filterBed.mxPort, secure: false, ignoreTLS: true, name: 'mail.sender.test' });
  try {
    await t.sendMail({ envelope: { from, to: [to] }, raw });
  } finally {
    t.close();
  }
}

/**
 * The sender domain authenticated, as a real one publishes it: a DNS server on rspamd's resolver
 * port answers SPF (v=spf1 ip4:127.0.0.1 -all: the bed's MX sees mail from loopback), the DKIM
 * key and DMARC p=reject for sender.test; composeKind then signs with that key. Only one process
 * can hold the port: close() it when done.
 */
export async function authenticateSender(): Promise<{ dns: TestDnsServer; dkim: DkimKey }> {
  const dns = await startTestDnsServer({ port: filterBed.dnsPort });
  const pair = generateDkimKey(2048);
  // A selector of its own per run: rspamd caches DKIM keys (a day), and each run makes a new key.
  const dkim: DkimKey = { domain: 'sender.test', selector: `cadenza${randomBytes(4).toString('hex')}`, privateKey: pair.privateKeyPem };
  dns.setTxt('sender.test', ['v=spf1 ip4:127.0.0.1 -all']);
  dns.setTxt(dkimRecordName(dkim.selector, dkim.domain), [dkimTxtValue(pair.publicKeyPem)]);
  dns.setTxt('_dmarc.sender.test', ['v=DMARC1; p=reject']);
  return { dns, dkim };
}

export interface Placement {
  folder: 'INBOX' | 'Junk';
  /** The sync-style key of the copy (folder:uidvalidity:uid), for FolderActions. */
  key: string;
  /** rspamd's verdict as delivered: "Yes, score=11.70" / "No, score=0.00". */
  spamStatus: string | null;
  /** rspamd's X-Spamd-Result: every rule that ran, unfolded. */
  spamdResult: string | null;
}

/** Where each of these messages is now (waits up to waitMs for all of them to be delivered). */
export async function placesOf(n: number, messageIds: string[], waitMs = 10_000): Promise<Map<string, Placement>> {
  const u = filterBed.user(n);
  const c = new ImapFlow({ host: filterBed.host, port: filterBed.imapPort, secure: false, doSTARTTLS: false, auth: { user: u.user, pass: u.pass }, logger: false, disableAutoIdle: true });
  c.on('error', () => undefined);
  await c.connect();
  const out = new Map<string, Placement>();
  const wanted = new Set(messageIds);
  const until = Date.now() + waitMs;
  try {
    for (;;) {
      out.clear();
      for (const folder of ['INBOX', 'Junk'] as const) {
        const lock = await c.getMailboxLock(folder, { readOnly: true });
        try {
          const uidValidity = c.mailbox ? c.mailbox.uidValidity : 0n;
          const uids = await c.search({ all: true }, { uid: true });
          if (uids && uids.length) {
            for await (const m of c.fetch(uids, { uid: true, envelope: true, headers: ['x-spam-status', 'x-spamd-result'] }, { uid: true })) {
              const id = m.envelope?.messageId;
              if (!id || !wanted.has(id)) continue;
              const h = m.headers ? m.headers.toString('latin1').replace(/\r?\n[ \t]+/g, ' ') : '';
              const status = /x-spam-status:[ \t]*([^\r\n]*)/i.exec(h)?.[1]?.trim() ?? null;
              const result = /x-spamd-result:[ \t]*([^\r\n]*)/i.exec(h)?.[1]?.trim() ?? null;
              out.set(id, { folder, key: imapMessageKey(folder, uidValidity, m.uid), spamStatus: status, spamdResult: result });
            }
          }
        } finally {
          lock.release();
        }
      }
      if (out.size >= wanted.size || Date.now() > until) return out;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await c.logout().catch(() => c.close());
  }
}

export type ContentKind = 'ham' | 'spammy';

/**
 * One email of each kind, written as a rep might, composed by Cadenza's composer (Message-ID,
 * List-Unsubscribe, MIME) for the sender alice@sender.test. The spammy one trips rules that rspamd
 * judges on content alone (no DNS lists, no Bayes): a shouting subject, links to a bare IP whose
 * text names another site, and the extortion pattern of a bitcoin wallet with scam wording.
 */
export function kindContent(kind: ContentKind): { subject: string; text: string; html?: string } {
  if (kind === 'ham') {
    return {
      subject: 'Quick question about onboarding at Acme',
      text: 'Hi Sam,\n\nI saw your support team is growing this quarter. We help teams like yours onboard new agents in half the time.\n\nWould a short call next week make sense?\n\nBest,\nAlice',
    };
  }
  return {
    subject: 'URGENT: YOUR ACCOUNT WILL BE CLOSED TODAY',
    text: 'Dear customer, verify your account now. We know your password. Pay 0.5 BTC to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2 or we will publish the video.',
    html: '<p>Dear customer, verify your account now: <a href="http://203.0.113.7/login">https://www.paypal.com/signin</a>. We know your password. Pay 0.5 BTC to our bitcoin address 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2 or we will publish the video.</p>',
  };
}

const SENDER = 'alice@sender.test';
const TRACKING_KEY = randomBytes(32);

export async function composeKind(kind: ContentKind, to: string, tag: string, dkim: DkimKey | null = null): Promise<{ raw: Buffer; messageId: string }> {
  const messageId = `<${kind}-${tag}@sender.test>`;
  const links = trackingLinks({ key: TRACKING_KEY, baseUrl: 'https://t.sender.test', workspaceId: 'ws-placement', sendRequestId: tag });
  const email = await composeEmail({ messageId, date: Date.now(), from: { address: SENDER, name: 'Alice Sender' }, to: { address: to, name: 'Sam Lead' }, content: { ...kindContent(kind), subject: kindContent(kind).subject }, links, dkim });
  return { raw: email.raw, messageId };
}

export interface PlacementFigures {
  sent: number;
  /** Share in INBOX as the filter filed them. */
  inboxBefore: number;
  /** Share in INBOX after the warmup rescue (IMAP MOVE of every Junk copy to INBOX). */
  inboxAfter: number;
  /** Moves that were needed and how many the server confirmed. */
  rescued: number;
  rescueMs: number;
  /** The spam statuses seen (one per message). */
  statuses: string[];
  /** rspamd's rule lists (X-Spamd-Result), one per message. */
  results: string[];
}

/**
 * Sends `count` emails of one kind to filter-bed user n, waits for delivery, measures the INBOX
 * share, rescues every copy in Junk with the IMAP connector's folder action (moveToInbox, as the
 * warmup does), and measures again.
 */
export async function measurePlacement(kind: ContentKind, n: number, count: number, dkim: DkimKey | null = null): Promise<PlacementFigures> {
  const to = filterBed.user(n).user;
  const ids: string[] = [];
  const tag = randomBytes(4).toString('hex');
  for (let i = 0; i < count; i++) {
    const m = await composeKind(kind, to, `${tag}-${i}`, dkim);
    await deliver(m.raw, SENDER, to);
    ids.push(m.messageId);
  }
  const before = await placesOf(n, ids);
  if (before.size < ids.length) throw new Error(`${ids.length - before.size} of ${ids.length} ${kind} messages never arrived`);
  const junk = [...before.values()].filter((p) => p.folder === 'Junk');
  const actions = imapFolderActions(imapAccount(n));
  let rescued = 0;
  const t0 = performance.now();
  for (const p of junk) {
    const r = await actions.moveToInbox(p.key);
    if (r.status === 'done') rescued++;
    else throw new Error(`rescue of ${p.key} failed: ${r.status} ${'reason' in r ? r.reason : ''}`);
  }
  const rescueMs = performance.now() - t0;
  await actions.close?.();
  const after = await placesOf(n, ids, 2_000);
  const inboxShare = (m: Map<string, Placement>) => [...m.values()].filter((p) => p.folder === 'INBOX').length / ids.length;
  return { sent: ids.length, inboxBefore: inboxShare(before), inboxAfter: inboxShare(after), rescued, rescueMs, statuses: [...before.values()].map((p) => p.spamStatus ?? ''), results: [...before.values()].map((p) => p.spamdResult ?? '') };
}

import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import type { Logger as NodemailerLogger } from 'nodemailer/lib/shared/index.js';
import type { ImapFlow } from 'imapflow';
import type { Clock } from '../../../common/clock.ts';
import { cadenzaError, isCadenzaError } from '../../../common/errors.ts';
import type { Logger } from '../../../common/logger.ts';
import type { Endpoint } from '../../settings.ts';
import type { ImapAccount, ImapTimeouts, MailAuth } from '../../imap/account.ts';
import { connectImap, withImap } from '../../imap/connect.ts';
import { pinnedHost } from '../../mail-hosts.ts';
import { appendToSent, type AppendedCopy } from '../../imap/append-to-sent.ts';
import { settleSentCopy } from '../../imap/settle-sent-copy.ts';
import { findByMessageId } from '../../imap/find-by-message-id.ts';
import { searchRecentMail } from '../../imap/search-recent-mail.ts';
import { listSentSince } from '../../imap/list-sent-since.ts';
import { handSentPages } from '../sent-pages.ts';
import { findFolder } from '../../imap/special-folders.ts';
import { WarmImap } from '../../imap/warm-connection.ts';
import { assertMessageId } from '../../imap/message-id.ts';
import type { Transport } from '../connector.ts';
import {
  enhancedStatusOf,
  PENDING_KEYWORD,
  type Envelope,
  type FindSentResult,
  type RecentMail,
  type RecentMailQuery,
  type RecentMailResult,
  type RecipientBounce,
  type SendContext,
  type SendOutcome,
  type SendPhase,
  type SentCopy,
  type SentPageHandler,
  type SentSinceResult,
  type SentProof,
} from '../outcomes.ts';
import { smtpLogin } from './login.ts';
import { defaultSmtpTimeouts, type SmtpTimeouts } from './smtp-timeouts.ts';
import { check, destroyConnection, KeptConnection, liveConnection, type LiveConnection } from './kept-connection.ts';

/**
 * The sending part of an SMTP/IMAP mailbox's connector (connector.ts Transport): one connection
 * per mailbox, kept open between sends and checked with RSET before each reuse, closed after
 * `idleMs` (kept-connection.ts), on nodemailer's SMTP client (SMTPConnection, the engine under nodemailer's SMTP
 * transport), driven step by step (connect → EHLO/STARTTLS → AUTH → MAIL/RCPT/DATA) so that
 * each failure is known to belong to one phase. The raw bytes go out exactly as composed: no
 * Mailer, no header rewriting, so the copy filed in Sent is byte-for-byte what the recipient got.
 *
 * Knowing the phase inside MAIL/RCPT/DATA. nodemailer hands one callback for the whole
 * transaction, and a dropped connection gives the same error ("Connection closed unexpectedly",
 * code ECONNECTION, command CONN) whether it happened before or after the DATA terminator
 * (shared/recipes/mail-testbed.md, "Ambiguous send"). So we give nodemailer a logger with
 * `transactionLog: true` and follow the records it writes as it goes (PhaseTracker below):
 *   client line 'MAIL FROM:…' / 'RCPT TO:…' / 'DATA'     → mail / rcpt / data
 *   server line '354 …' while in data                    → body (message bytes start)
 *   tnx 'message' record '<N bytes encoded mime message>' → end_of_data: nodemailer writes it on
 *     the 'end' of its DATA stream, which comes after the last chunk, terminator included, was
 *     passed to socket.write (pipe writes synchronously in 'data'; 'end' follows on nextTick,
 *     before any socket event can run).
 * A drop in 'body' is therefore certainly not a delivery (no server accepts a message without its
 * terminator): transient. A drop, timeout or abort in 'end_of_data' is 'ambiguous'. The records
 * are nodemailer 7's (pinned exactly in package.json); smtp.test.ts drops the connection at each
 * phase against a scripted server, so a change in them fails a test rather than misclassifying.
 *
 * The Sent copy. With `serverSavesSent` the provider files the copy (Gmail, Outlook, most hosts)
 * once it accepted the message: a copy found proves the send, none after the provider's delay
 * proves it was not accepted (SentProof 'provider_copy'). Otherwise the transport writes the copy
 * itself, and writes it FIRST (SentProof 'copy_first'): it APPENDs the bytes to Sent marked
 * $CadenzaPending before MAIL FROM, on an IMAP connection it keeps open during the SMTP
 * transaction, and after the answer it settles the copy: 250 → the keyword is removed; a certain
 * refusal (4xx, 5xx, bounce at RCPT, AUTH refused) → the copy is removed; no answer (ambiguous) →
 * left pending. A crash anywhere leaves a state a later search can read: no copy = never handed
 * over (the APPEND precedes the handover), a pending copy = cannot tell ("possibly sent", never
 * retried automatically), a settled copy = sent. Appending AFTER the 250, as mail clients do,
 * opened a window (250 received, copy not yet written) in which a crash made a delivered message
 * look unsent: issue 10. If the APPEND itself fails nothing is sent (transient, phase
 * 'sent_copy'): a send without its proof is a send that could go twice.
 */

export interface SmtpTransportConfig {
  smtp: Endpoint;
  /** The mailbox's IMAP server: where findSent searches and where the Sent copy is appended. */
  imap: Endpoint | null;
  username: string;
  auth: MailAuth;
  /** mailbox.settings.serverSavesSent: does the submission server file the Sent copy itself? */
  serverSavesSent: boolean;
  folders?: ImapAccount['folders'];
  timeouts?: Partial<SmtpTimeouts>;
  imapTimeouts?: Partial<ImapTimeouts>;
  /** The EHLO name; nodemailer's default is the host name, or [127.0.0.1] when it is not a FQDN. */
  clientName?: string;
}

export interface SmtpTransportDeps {
  clock: Clock;
  logger?: Logger;
}


export function createSmtpTransport(config: SmtpTransportConfig, deps: SmtpTransportDeps): Transport {
  return new SmtpTransport(config, deps);
}

class SmtpTransport implements Transport {
  readonly kind = 'smtp' as const;
  readonly sentProof: SentProof;
  private readonly timeouts: SmtpTimeouts;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The last look's connections, one parked in each folder (INBOX, Junk), so that both are asked at once. */
  private readonly looks = new Map<'inbox' | 'junk', WarmImap>();
  /** The Junk folder's path once discovered (null: the account has none). */
  private junkPath: string | null | undefined;
  /** The mailbox's SMTP connection between sends (kept-connection.ts). */
  private readonly kept: KeptConnection;

  constructor(
    private readonly config: SmtpTransportConfig,
    private readonly deps: SmtpTransportDeps,
  ) {
    this.timeouts = { ...defaultSmtpTimeouts, ...config.timeouts };
    this.kept = new KeptConnection(deps.clock, this.timeouts.idleMs);
    this.sentProof = config.serverSavesSent ? 'provider_copy' : 'copy_first';
    if (!config.serverSavesSent && !config.imap) {
      throw cadenzaError('CONFIG_INVALID', 'serverSavesSent is false, so the Sent copy is appended over IMAP, but the mailbox has no IMAP settings');
    }
  }

  async send(raw: Buffer, envelope: Envelope, ctx: SendContext): Promise<SendOutcome> {
    checkInput(raw, envelope, ctx);
    const work = this.sendChecked(raw, envelope, ctx);
    this.inFlight.add(work);
    try {
      return await work;
    } finally {
      this.inFlight.delete(work);
    }
  }

  private async sendChecked(raw: Buffer, envelope: Envelope, ctx: SendContext): Promise<SendOutcome> {
    const done = this.config.serverSavesSent ? withCopy(await this.attempt(raw, envelope, ctx), 'server') : await this.sendCopyFirst(raw, envelope, ctx);
    const phase = 'phase' in done ? done.phase : done.kind === 'accepted' ? 'done' : 'rcpt';
    this.deps.logger?.info(
      { messageId: ctx.messageId, outcome: done.kind, phase, sentCopy: 'sentCopy' in done ? done.sentCopy : 'none', reason: 'reason' in done ? done.reason : undefined },
      'smtp send',
    );
    return done;
  }

  /** SentProof 'copy_first' (file comment): pending copy, SMTP transaction, settle the copy. */
  private async sendCopyFirst(raw: Buffer, envelope: Envelope, ctx: SendContext): Promise<SendOutcome> {
    let client: ImapFlow;
    try {
      client = await connectImap(this.imapAccount());
    } catch (e) {
      return copyFailed(e);
    }
    try {
      let copy: AppendedCopy;
      try {
        copy = await appendToSent(client, raw, { sentAt: new Date(this.deps.clock.now()), keywords: [PENDING_KEYWORD], account: this.config });
      } catch (e) {
        return copyFailed(e);
      }
      const outcome = await this.attempt(raw, envelope, ctx);
      if (outcome.kind === 'ambiguous') return withCopy(outcome, 'pending');
      const settled = await this.settle(client, copy, raw, ctx.messageId, outcome.kind === 'accepted' ? 'sent' : 'not_sent');
      if (outcome.kind === 'accepted') return withCopy(outcome, settled ? 'appended' : 'pending');
      return outcome;
    } finally {
      if (client.usable) await client.logout().catch(() => client.close());
      else client.close();
    }
  }

  /**
   * Settles the pending copy, on the open connection, then once more on a fresh one (the
   * connection may have dropped during a long SMTP transaction). False when it could not: the
   * copy stays pending, which a later search reads as "possibly sent", never as "not sent".
   */
  private async settle(client: ImapFlow, copy: AppendedCopy, raw: Buffer, messageId: string, outcome: 'sent' | 'not_sent'): Promise<boolean> {
    const once = async (c: ImapFlow) => {
      const uids = copy.uid !== null ? [copy.uid] : (await findByMessageId(c, copy.folder, messageId)).filter((h) => h.flags.includes(PENDING_KEYWORD)).map((h) => h.uid);
      for (const uid of uids) await settleSentCopy(c, { folder: copy.folder, uid }, PENDING_KEYWORD, outcome);
    };
    try {
      await (client.usable ? once(client) : withImap(this.imapAccount(), once));
      return true;
    } catch {
      try {
        await withImap(this.imapAccount(), once);
        return true;
      } catch (e) {
        this.deps.logger?.warn({ messageId, outcome, bytes: raw.length, err: errorSummary(e) }, 'could not settle the pending Sent copy; it stays pending');
        return false;
      }
    }
  }

  async findSent(messageId: string): Promise<FindSentResult> {
    assertMessageId(messageId);
    if (!this.config.imap) return { status: 'unavailable', reason: 'the mailbox has no IMAP settings to search its Sent folder' };
    try {
      const hits = await withImap(this.imapAccount(), async (client) => {
        const folder = await findFolder(client, 'sent', this.config);
        return findByMessageId(client, folder, messageId);
      });
      if (hits.length === 0) return { status: 'not_found' };
      // One settled copy proves the send; copies that are all still pending prove only the attempt.
      const settled = hits.filter((h) => !h.flags.includes(PENDING_KEYWORD));
      const dates = (settled.length ? settled : hits).map((h) => h.internalDate).filter((d): d is number => d !== null);
      return { status: 'found', sentAt: dates.length ? Math.min(...dates) : null, ...(settled.length ? {} : { pending: true }) };
    } catch (e) {
      if (isCadenzaError(e, 'INVALID_INPUT')) throw e;
      return { status: 'unavailable', reason: errorSummary(e).message };
    }
  }

  /** The Sent folder since an instant, page by page, on a connection of its own (list-sent-since.ts). */
  async sentSince(since: number, onPage: SentPageHandler): Promise<SentSinceResult> {
    if (!this.config.imap) return { status: 'unavailable', reason: 'the mailbox has no IMAP settings to read its Sent folder', copies: 0 };
    // The handler's own failure passes through withImap too; it is told apart from the mailbox's.
    let handlerFailed = false;
    const guarded: SentPageHandler = async (copies) => {
      try {
        await onPage(copies);
      } catch (e) {
        handlerFailed = true;
        throw e;
      }
    };
    try {
      return await withImap(this.imapAccount(), async (client) => handSentPages(listSentSince(client, await findFolder(client, 'sent', this.config), since), guarded));
    } catch (e) {
      if (handlerFailed) throw e;
      return { status: 'unavailable', reason: errorSummary(e).message, copies: 0 };
    }
  }

  /**
   * The mailbox last look over IMAP: INBOX and the Junk folder, each on its own warm connection
   * that stays in its folder (search-recent-mail.ts: NOOP + UID SEARCH, and a FETCH when
   * something matched), both at once.
   */
  async recentMailFrom(q: RecentMailQuery): Promise<RecentMailResult> {
    if (!this.config.imap) return { status: 'unavailable', reason: 'the mailbox has no IMAP settings to look at its inbox' };
    try {
      if (this.junkPath === undefined) {
        this.junkPath = this.config.folders?.junk ?? (await this.warm('inbox').run((c) => findFolder(c, 'junk', this.config).catch((e: unknown) => {
          if (isCadenzaError(e, 'MAILBOX_FOLDER_NOT_FOUND')) return null;
          throw e;
        })));
      }
      const folders: Array<['inbox' | 'junk', string]> = [['inbox', 'INBOX']];
      if (this.junkPath && this.junkPath.toUpperCase() !== 'INBOX') folders.push(['junk', this.junkPath]);
      const found = await Promise.all(folders.map(([role, path]) => this.warm(role).run((c) => searchRecentMail(c, path, q))));
      return { status: 'ok', messages: found.flat() as RecentMail[] };
    } catch (e) {
      if (isCadenzaError(e, 'INVALID_INPUT')) throw e;
      return { status: 'unavailable', reason: errorSummary(e).message };
    }
  }

  private warm(role: 'inbox' | 'junk'): WarmImap {
    let w = this.looks.get(role);
    if (!w) this.looks.set(role, (w = new WarmImap(this.imapAccount(), { clock: this.deps.clock, ...(this.deps.logger ? { logger: this.deps.logger } : {}) })));
    return w;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    this.kept.close();
    await Promise.allSettled([...this.looks.values()].map((w) => w.close()));
    this.looks.clear();
  }

  private imapAccount(): ImapAccount {
    const { imap, username, auth, folders, imapTimeouts } = this.config;
    if (!imap) throw cadenzaError('CONFIG_INVALID', 'the mailbox has no IMAP settings');
    return { endpoint: imap, username, auth, ...(folders ? { folders } : {}), ...(imapTimeouts ? { timeouts: imapTimeouts } : {}) };
  }

  /**
   * One message: on the mailbox's kept connection when there is one and it answers the RSET
   * (kept-connection.ts), otherwise on a new one. Resolves exactly once, never rejects. A new
   * connection's host is checked under the destination policy first, and it goes to the vetted
   * address (mailbox/mail-hosts.ts).
   */
  private async attempt(raw: Buffer, envelope: Envelope, ctx: SendContext): Promise<SendOutcome> {
    const kept = this.kept.take();
    // Found dead before MAIL FROM: nothing of this message went out on it; a new connection.
    if (kept && (await check(kept, this.deps.clock, this.timeouts.reuseCheckMs))) return this.transact(kept, raw, envelope, ctx);
    let pin: { host: string; servername?: string };
    try {
      pin = await pinnedHost(this.config.smtp.host);
    } catch (e) {
      return transient('connect', `SMTP connect: ${(e as Error).message}`, null);
    }
    return this.transact(pin, raw, envelope, ctx);
  }

  /**
   * The SMTP transaction of one message, on `on`: a checked kept connection (from MAIL FROM), or a
   * new connection to the vetted host (connect → EHLO/STARTTLS → AUTH → MAIL/RCPT/DATA). The
   * deadline (totalMs) runs from here to the final reply. An accepted message leaves the
   * connection kept for the next send; any other outcome closes it (destroyed: after an error the
   * session's state is not to be trusted).
   */
  private transact(on: LiveConnection | { host: string; servername?: string }, raw: Buffer, envelope: Envelope, ctx: SendContext): Promise<SendOutcome> {
    const { auth, username } = this.config;
    const t = this.timeouts;
    return new Promise<SendOutcome>((resolve) => {
      let settled = false;
      const reused = 'conn' in on ? on : null;
      if (ctx.signal?.aborted) {
        if (reused) this.kept.keep(reused);
        resolve(transient(reused ? 'mail' : 'connect', reused ? 'aborted before MAIL FROM' : 'aborted before connecting', null));
        return;
      }
      const live = reused ?? this.open(on as { host: string; servername?: string });
      const { conn, tracker } = live;
      const finish = (o: SendOutcome, keep: boolean) => {
        if (settled) return;
        settled = true;
        deadline.cancel();
        ctx.signal?.removeEventListener('abort', onAbort);
        live.trouble = undefined;
        // After a deadline or an abort the connection may be half-open: destroyed, not waited for.
        if (keep) this.kept.keep(live);
        else destroyConnection(live);
        resolve(o);
      };
      const onAbort = () => finish(interrupted(tracker.phase, 'aborted'), false);
      const deadline = this.deps.clock.setTimer(t.totalMs, () => finish(interrupted(tracker.phase, `no final answer within ${t.totalMs} ms`), false));
      ctx.signal?.addEventListener('abort', onAbort, { once: true });
      // nodemailer reports connection-level trouble (socket errors, timeouts, unexpected close)
      // as 'error' events, not through the pending callback.
      live.trouble = (kind, err) => finish(kind === 'error' ? classifyError(err, tracker.phase) : interrupted(tracker.phase, 'the server closed the connection'), false);

      const transaction = () => {
        tracker.set('mail');
        conn.send({ from: envelope.from, to: envelope.to, size: raw.length, use8BitMime: has8bit(raw) }, raw, (sendErr, info) => {
          if (sendErr) return finish(classifyError(sendErr, tracker.phase), false);
          tracker.set('done');
          finish(acceptedOutcome(info), true);
        });
      };
      if (reused) {
        transaction();
        return;
      }
      conn.connect(() => {
        // SMTP is a conversation of small writes, each waiting for an answer: with Nagle's
        // algorithm on, every turn can wait out the peer's delayed ACK (~40 ms here, ~150 ms a
        // send). Set on the socket once, so it holds for every message the connection carries.
        (conn as unknown as { _socket?: { setNoDelay?: (on: boolean) => void } })._socket?.setNoDelay?.(true);
        tracker.set('auth');
        // allowsAuth: the EHLO answer listed AUTH (nodemailer sets it; not in its type definitions).
        if (!(conn as unknown as { allowsAuth?: boolean }).allowsAuth) {
          // Sending unauthenticated would be refused at RCPT as "relay access denied", which
          // must not be mistaken for a bounce of the recipient.
          finish({ kind: 'auth_failed', phase: 'auth', reason: 'the server offers no AUTH mechanism on this connection (is STARTTLS required first?)', responseCode: null }, false);
          return;
        }
        conn.login(smtpLogin(auth, username), (err) => {
          if (err) return finish(classifyError(err, 'auth'), false);
          transaction();
        });
      });
    });
  }
  /** A new connection to the vetted host, not yet connected (transact connects it). */
  private open(pin: { host: string; servername?: string }): LiveConnection {
    const { smtp } = this.config;
    const t = this.timeouts;
    const tracker = new PhaseTracker();
    const conn = new SMTPConnection({
      host: pin.host,
      port: smtp.port,
      secure: smtp.security === 'tls',
      requireTLS: smtp.security === 'starttls',
      ignoreTLS: smtp.security === 'none',
      tls: { rejectUnauthorized: !smtp.allowSelfSigned, ...(pin.servername ? { servername: pin.servername } : {}) },
      ...(pin.servername ? { servername: pin.servername } : {}),
      ...(this.config.clientName ? { name: this.config.clientName } : {}),
      connectionTimeout: t.connectMs,
      greetingTimeout: t.greetingMs,
      socketTimeout: t.socketMs,
      logger: tracker.logger,
      transactionLog: true,
    });
    return liveConnection(conn, tracker);
  }
}

/** Follows nodemailer's transaction log (see the file comment) to know the SMTP phase. */
class PhaseTracker {
  phase: SendPhase = 'connect';
  readonly logger: NodemailerLogger;

  constructor() {
    const on = (entry: unknown, message: unknown) => this.onRecord(entry, message);
    this.logger = { level: () => undefined, trace: on, debug: on, info: on, warn: on, error: on, fatal: on };
  }

  set(phase: SendPhase): void {
    this.phase = phase;
  }

  private onRecord(entry: unknown, message: unknown): void {
    const tnx = (entry as { tnx?: unknown } | null)?.tnx;
    const text = typeof message === 'string' ? message : '';
    if (tnx === 'network' && this.phase === 'connect' && text.includes('established')) this.phase = 'greeting';
    else if (tnx === 'client') {
      const cmd = text.slice(0, 10).toUpperCase();
      if (/^(EHLO|HELO|LHLO) /.test(cmd)) this.phase = 'ehlo';
      else if (cmd.startsWith('STARTTLS')) this.phase = 'starttls';
      else if (cmd.startsWith('AUTH ')) this.phase = 'auth';
      else if (cmd.startsWith('MAIL FROM:')) this.phase = 'mail';
      else if (cmd.startsWith('RCPT TO:')) this.phase = 'rcpt';
      else if (cmd === 'DATA') this.phase = 'data';
    } else if (tnx === 'server' && this.phase === 'data' && /^3\d\d/.test(text)) this.phase = 'body';
    else if (tnx === 'message' && this.phase === 'body' && typeof (entry as { outByteCount?: unknown }).outByteCount === 'number') {
      this.phase = 'end_of_data';
    }
  }
}

type SmtpError = Error & {
  code?: string;
  command?: string;
  response?: string;
  responseCode?: number;
  recipient?: string;
  rejectedErrors?: SmtpError[];
  transient?: boolean;
};

/**
 * nodemailer's error → outcome. `code` says what kind (EAUTH, EENVELOPE at MAIL/RCPT/DATA,
 * EMESSAGE for the final reply, ECONNECTION/ESOCKET/ETIMEDOUT/EDNS/ETLS/EPROTOCOL for the
 * connection), `command` the SMTP command, `responseCode` the server's reply; the tracked phase
 * decides for the connection-level ones, whose command is always 'CONN'.
 */
export function classifyError(e: unknown, phase: SendPhase): SendOutcome {
  const err = (e ?? {}) as SmtpError;
  const code = err.code ?? '';
  const command = (err.command ?? '').toUpperCase();
  const rc = typeof err.responseCode === 'number' ? err.responseCode : null;
  const reason = describe(err);
  const status = enhancedStatusOf(err.response);

  if (code === 'EAUTH' || command.startsWith('AUTH')) {
    if (err.transient === true || (rc !== null && rc >= 400 && rc < 500)) return transient('auth', reason, rc, status);
    return { kind: 'auth_failed', phase: 'auth', reason, responseCode: rc };
  }
  if (code === 'EENVELOPE' && command === 'RCPT TO') {
    const refused = (err.rejectedErrors ?? []).map(toBounce);
    // Only when every refusal is permanent is it a bounce; a 4xx (greylisting, mailbox busy)
    // means "try again", for all of them, later.
    if (refused.length > 0 && refused.every((r) => r.responseCode !== null && r.responseCode >= 500)) return { kind: 'bounce', recipients: refused };
    const firstTemp = refused.find((r) => r.responseCode === null || r.responseCode < 500);
    return transient('rcpt', reason, firstTemp?.responseCode ?? rc, firstTemp?.enhancedStatus ?? status);
  }
  if (code === 'EENVELOPE' || code === 'EMESSAGE' || code === 'EREQUIRETLS') {
    const p: SendPhase = command === 'MAIL FROM' ? 'mail' : command === 'DATA' ? (code === 'EMESSAGE' ? 'end_of_data' : 'data') : phase;
    // A reply, even after the terminator, is an answer: 4xx = not accepted, try again.
    if (rc !== null && rc >= 400 && rc < 500) return transient(p, reason, rc, status);
    return { kind: 'rejected', phase: p, reason, responseCode: rc, enhancedStatus: status };
  }
  if (code === 'ESTREAM') return { kind: 'rejected', phase, reason, responseCode: null, enhancedStatus: null };
  // Connection-level: ECONNECTION, ESOCKET, ETIMEDOUT, EDNS, ETLS, EPROTOCOL and anything else.
  return interrupted(phase, reason, rc, status);
}

/** The connection ended without a reply: ambiguous only once the terminator was written. */
function interrupted(phase: SendPhase, reason: string, rc: number | null = null, status: string | null = null): SendOutcome {
  if (phase === 'end_of_data') return { kind: 'ambiguous', phase, reason, sentCopy: 'none' };
  return transient(phase, reason, rc, status);
}

function transient(phase: SendPhase, reason: string, rc: number | null, status: string | null = null): SendOutcome {
  return { kind: 'transient', phase, reason, responseCode: rc, enhancedStatus: status, retryAfterMs: null };
}

function withCopy(o: SendOutcome, sentCopy: SentCopy): SendOutcome {
  return o.kind === 'accepted' || o.kind === 'ambiguous' ? { ...o, sentCopy } : o;
}

/** The pending copy could not be written: nothing was handed over. Refused credentials pause the mailbox. */
function copyFailed(e: unknown): SendOutcome {
  const reason = `could not write the Sent copy before sending: ${errorSummary(e).message}`;
  if (isCadenzaError(e, 'MAILBOX_AUTH_FAILED')) return { kind: 'auth_failed', phase: 'sent_copy', reason, responseCode: null };
  return transient('sent_copy', reason, null);
}

function toBounce(err: SmtpError): RecipientBounce {
  const rc = typeof err.responseCode === 'number' ? err.responseCode : null;
  return { recipient: err.recipient ?? '', responseCode: rc, enhancedStatus: enhancedStatusOf(err.response), diagnostic: (err.response ?? err.message ?? '').trim() };
}

function acceptedOutcome(info: SMTPConnection.SentMessageInfo): SendOutcome {
  const response = (info.response ?? '').trim();
  const bounced = (info.rejectedErrors ?? []).map((e) => toBounce(e as SmtpError)).filter((b) => b.responseCode !== null && b.responseCode >= 500);
  return { kind: 'accepted', response, providerId: queueIdOf(response), bounced, sentCopy: 'none' };
}

/** The server's id for the message, from its 250 reply: Postfix 'queued as X', Exim 'id=X'. */
export function queueIdOf(response: string): string | null {
  const m = /queued as ([A-Za-z0-9._-]+)/i.exec(response) ?? /\bid=([A-Za-z0-9._-]+)/.exec(response);
  return m ? m[1]! : null;
}

function describe(err: SmtpError): string {
  const parts = [err.code, err.command].filter(Boolean).join(' ');
  return `${parts ? `${parts}: ` : ''}${err.message ?? String(err)}`.slice(0, 1000);
}

function errorSummary(e: unknown): { code?: string; message: string } {
  if (isCadenzaError(e)) return { code: e.code, message: e.message };
  return { message: e instanceof Error ? e.message : String(e) };
}

function has8bit(raw: Buffer): boolean {
  for (const b of raw) if (b > 0x7f) return true;
  return false;
}

const addressRe = /^[^\s<>@]+@[^\s<>@]+$/;

/** Programming errors, not provider trouble: thrown, with a clear message (promise 8). */
function checkInput(raw: Buffer, envelope: Envelope, ctx: SendContext): void {
  if (!Buffer.isBuffer(raw) || raw.length === 0) throw cadenzaError('INVALID_INPUT', 'send: the message is empty');
  if (!envelope || typeof envelope.from !== 'string' || !addressRe.test(envelope.from)) {
    throw cadenzaError('INVALID_INPUT', `send: invalid envelope sender ${JSON.stringify(envelope?.from)}`);
  }
  if (!Array.isArray(envelope.to) || envelope.to.length === 0) throw cadenzaError('INVALID_INPUT', 'send: the envelope has no recipient');
  const bad = envelope.to.filter((a) => typeof a !== 'string' || !addressRe.test(a));
  if (bad.length) throw cadenzaError('INVALID_INPUT', `send: invalid envelope recipient ${JSON.stringify(bad[0])}`);
  assertMessageId(ctx.messageId);
  const inRaw = headerOf(raw, 'message-id');
  if (inRaw?.trim() !== ctx.messageId) {
    throw cadenzaError('INVALID_INPUT', `send: the message's Message-ID ${JSON.stringify(inRaw ?? null)} is not ${ctx.messageId}, which findSent would search for`);
  }
}

/** The unfolded value of the first header `name` in raw's header section, or null. */
export function headerOf(raw: Buffer, name: string): string | null {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end === -1 ? Math.min(raw.length, 1 << 20) : end).toString('latin1');
  const unfolded = head.replace(/\r?\n[ \t]/g, ' ');
  const want = `${name.toLowerCase()}:`;
  for (const line of unfolded.split(/\r?\n/)) {
    if (line.toLowerCase().startsWith(want)) return line.slice(want.length).trim();
  }
  return null;
}

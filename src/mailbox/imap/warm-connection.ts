import type { ImapFlow } from 'imapflow';
import type { Clock, TimerHandle } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { ImapAccount } from './account.ts';
import { connectImap } from './connect.ts';

/**
 * One IMAP connection kept open between uses, for a question asked before every follow-up (the
 * mailbox last look): a fresh connection costs a TCP (and TLS) handshake and a LOGIN, several
 * round trips, where the question itself is one or two.
 *
 * Uses take turns (one command stream per connection). A use that fails on a connection that was
 * already open is tried once more on a new connection: a server closes
 * connections it finds idle (Dovecot after 30 minutes, RFC 3501 5.4 allows 30), and that must not
 * cost the caller an answer. Refused credentials are not retried. The connection is logged out
 * after `idleCloseMs` without use (the clock's timers never keep the process alive; cleared on close).
 */
export interface WarmImapOptions {
  clock: Clock;
  /** Log out after this long unused (default 10 minutes, below the servers' autologout). */
  idleCloseMs?: number;
  logger?: Logger;
  /** Opens a connection (default connectImap); tests pass their own. */
  connect?: (account: ImapAccount, o: { logger?: Logger }) => Promise<ImapFlow>;
}

export class WarmImap {
  private client: ImapFlow | null = null;
  private turn: Promise<unknown> = Promise.resolve();
  private idleTimer: TimerHandle | null = null;
  private closed = false;

  constructor(
    private readonly account: ImapAccount,
    private readonly o: WarmImapOptions,
  ) {}

  /** Runs fn on the warm connection (opening it if needed). Throws what fn or the connect throws. */
  run<T>(fn: (client: ImapFlow) => Promise<T>): Promise<T> {
    const next = this.turn.then(() => this.runNow(fn));
    this.turn = next.catch(() => undefined);
    return next;
  }

  private async runNow<T>(fn: (client: ImapFlow) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('warm IMAP connection is closed');
    this.idleTimer?.cancel();
    this.idleTimer = null;
    const reused = this.client !== null && this.client.usable;
    if (!reused) this.drop();
    try {
      return await fn(await this.open());
    } catch (e) {
      if (!reused || isCadenzaError(e, 'MAILBOX_AUTH_FAILED') || isCadenzaError(e, 'INVALID_INPUT')) {
        if (!this.client?.usable) this.drop();
        throw e;
      }
      // A failure on a connection that was already open is tried once more on a new one, whether
      // or not imapflow has noticed the drop yet: after a server's BYE its NOOP answers nothing
      // (it swallows the error) and SEARCH answers `false` while `usable` can still read true
      // until the close event runs (seen on the bed after `doveadm kick`).
      this.drop();
      return await fn(await this.open());
    } finally {
      this.armIdleClose();
    }
  }

  private async open(): Promise<ImapFlow> {
    if (this.client?.usable) return this.client;
    this.client = await (this.o.connect ?? connectImap)(this.account, this.o.logger ? { logger: this.o.logger } : {});
    return this.client;
  }

  private drop(): void {
    this.client?.close();
    this.client = null;
  }

  private armIdleClose(): void {
    if (this.closed || !this.client) return;
    this.idleTimer = this.o.clock.setTimer(this.o.idleCloseMs ?? 10 * 60_000, () => {
      this.idleTimer = null;
      void this.turn.then(() => this.logout());
    });
  }

  private async logout(): Promise<void> {
    const c = this.client;
    this.client = null;
    if (c?.usable) await c.logout().catch(() => c.close());
    else c?.close();
  }

  /** Logs out (after a use in progress). Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.idleTimer?.cancel();
    this.idleTimer = null;
    await this.turn;
    await this.logout();
  }
}

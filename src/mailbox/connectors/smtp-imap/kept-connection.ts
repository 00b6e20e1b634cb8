import type SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import type { Clock, TimerHandle } from '../../../common/clock.ts';
import type { SendPhase } from '../outcomes.ts';

/**
 * A mailbox's open SMTP connection between two sends (smtp-transport.ts): one per transport, and a
 * transport is one mailbox's, so one connection per mailbox. Reusing it saves the TCP, TLS, EHLO
 * and AUTH round trips of a new connection (on loopback 0.8 ms against 0.13 ms for the RSET; to a
 * real submission server most of a send's 160-190 ms).
 *
 * A connection is kept only after an accepted message; anything else closes it as before. While it
 * waits, its 'error' and 'end' events mark it dead (the server closed it, a socket timeout), and it
 * is closed with QUIT after `idleMs` without a send. take() hands it to the next send, which checks
 * it with RSET (check()) before MAIL FROM: a connection found dead there has handed nothing over,
 * so the send goes on a new connection with no ambiguity.
 */
export interface LiveConnection {
  conn: SMTPConnection;
  /** The SMTP phase of the message on this connection (smtp-transport.ts PhaseTracker). */
  tracker: { phase: SendPhase; set(p: SendPhase): void };
  /** The server closed it or it failed. */
  dead: boolean;
  /** Who hears of the connection's trouble now: the send using it, or the waiting slot. */
  trouble?: (kind: 'error' | 'end', err?: unknown) => void;
}

/** Wires the connection's 'error' and 'end' to whoever holds it now (live.trouble). */
export function liveConnection(conn: SMTPConnection, tracker: LiveConnection['tracker']): LiveConnection {
  const live: LiveConnection = { conn, tracker, dead: false };
  conn.on('error', (err) => {
    live.dead = true;
    live.trouble?.('error', err);
  });
  conn.on('end', () => {
    live.dead = true;
    live.trouble?.('end');
  });
  return live;
}

/** Ends a connection now: destroys the socket rather than waiting for the server's FIN. */
export function destroyConnection(live: LiveConnection): void {
  live.trouble = undefined;
  live.conn._socket?.destroy?.();
  live.conn.close();
}

export class KeptConnection {
  private kept: { live: LiveConnection; idle: TimerHandle } | null = null;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly idleMs: number,
  ) {}

  /** Keeps `live` for the next send (a second one kept, or a transport closing, is just closed). */
  keep(live: LiveConnection): void {
    if (live.dead || this.closed || this.kept) {
      quit(live);
      return;
    }
    const idle = this.clock.setTimer(this.idleMs, () => {
      if (this.kept?.live !== live) return;
      this.kept = null;
      quit(live);
    });
    live.trouble = () => {
      if (this.kept?.live !== live) return;
      this.kept = null;
      idle.cancel();
      destroyConnection(live);
    };
    this.kept = { live, idle };
  }

  /** The kept connection, if any and not known dead; it is the caller's from now on. */
  take(): LiveConnection | null {
    const k = this.kept;
    this.kept = null;
    if (!k) return null;
    k.idle.cancel();
    k.live.trouble = undefined;
    if (k.live.dead) {
      destroyConnection(k.live);
      return null;
    }
    return k.live;
  }

  /** Closes the kept connection (QUIT) and keeps none from now on. */
  close(): void {
    this.closed = true;
    const k = this.kept;
    this.kept = null;
    if (!k) return;
    k.idle.cancel();
    quit(k.live);
  }
}

/**
 * Checks a taken connection with RSET (RFC 5321 4.1.1.5: resets the transaction, nothing else)
 * within `withinMs`. True: ready for MAIL FROM. False: it was dead (closed, refused the RSET, or
 * silent); it is destroyed, and nothing of the next message was handed over on it.
 */
export function check(live: LiveConnection, clock: Clock, withinMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let done = false;
    const end = (ok: boolean) => {
      if (done) return;
      done = true;
      timer.cancel();
      live.trouble = undefined;
      if (!ok) destroyConnection(live);
      resolve(ok);
    };
    const timer = clock.setTimer(withinMs, () => end(false));
    live.trouble = () => end(false);
    if (live.dead) return end(false);
    live.conn.reset((err) => end(!err));
  });
}

/** A graceful close: QUIT, then close our side. */
function quit(live: LiveConnection): void {
  live.trouble = () => undefined;
  live.conn.quit();
  live.conn.close();
}

/** The SMTP sending part's deadlines (smtp-transport.ts), apart so that the connector's options can name them. */
export interface SmtpTimeouts {
  /** TCP (+ TLS) connection. */
  connectMs: number;
  /** Waiting for the 220 banner (some hosts delay it on purpose). */
  greetingMs: number;
  /** No byte from the server for this long while waiting for a reply: the connection is dead. */
  socketMs: number;
  /**
   * The whole attempt, from connect to the final reply (the outbox's "transport deadline"): what
   * keeps one send far below the gap between steps even if a server trickles bytes forever.
   */
  totalMs: number;
  /**
   * A mailbox's connection is kept open after a send for the next one (smtp-transport.ts), and
   * closed (QUIT) after this long without one. Below the idle timeouts servers apply (Postfix
   * smtpd_timeout 300 s, Exchange Online 10 min, Gmail a few minutes), so the usual end is ours.
   */
  idleMs: number;
  /**
   * A kept connection is checked with RSET before the next MAIL FROM; no answer within this long
   * and it is taken for dead (a peer gone without a FIN) and a new connection is opened.
   */
  reuseCheckMs: number;
}

/**
 * RFC 5321 4.5.3.2 asks clients to wait 5 minutes for the reply to the terminator and 10 for the
 * greeting; hosted submission servers answer in well under a second, and a sender blocked for
 * minutes on one mailbox delays every message behind it. One minute of silence is taken as a
 * dead connection; an answer that never comes after the terminator is 'ambiguous' either way.
 */
export const defaultSmtpTimeouts: SmtpTimeouts = { connectMs: 15_000, greetingMs: 30_000, socketMs: 60_000, totalMs: 120_000, idleMs: 30_000, reuseCheckMs: 5_000 };


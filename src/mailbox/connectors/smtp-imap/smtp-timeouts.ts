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
}

/**
 * RFC 5321 4.5.3.2 asks clients to wait 5 minutes for the reply to the terminator and 10 for the
 * greeting; hosted submission servers answer in well under a second, and a sender blocked for
 * minutes on one mailbox delays every message behind it. One minute of silence is taken as a
 * dead connection; an answer that never comes after the terminator is 'ambiguous' either way.
 */
export const defaultSmtpTimeouts: SmtpTimeouts = { connectMs: 15_000, greetingMs: 30_000, socketMs: 60_000, totalMs: 120_000 };


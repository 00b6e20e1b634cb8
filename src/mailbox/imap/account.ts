import type { ImapFlowOptions } from 'imapflow';
import type { Endpoint } from '../settings.ts';
import type { AccessTokenProvider } from '../access-token.ts';

/**
 * How to sign in to a mail server (IMAP here, SMTP in connectors/smtp-imap/smtp-transport.ts; one
 * place turns a credential into it, connectors/smtp-imap/login.ts): a password (or an app
 * password), or an OAuth 2 access token sent with SASL XOAUTH2 (Gmail, Microsoft 365).
 */
export type MailAuth =
  | { kind: 'password'; password: string }
  | { kind: 'xoauth2'; accessToken: AccessTokenProvider };

export type FolderRole = 'sent' | 'junk' | 'trash';

/** One IMAP account: where (mailbox.settings.imap), who, and how to sign in (from the vault). */
export interface ImapAccount {
  endpoint: Endpoint;
  username: string;
  auth: MailAuth;
  /** Folder paths the user picked; they win over discovery (special-folders.ts). */
  folders?: Partial<Record<FolderRole, string>>;
  timeouts?: Partial<ImapTimeouts>;
}

export interface ImapTimeouts {
  /** TCP + TLS handshake. */
  connectMs: number;
  /** Waiting for the server's "* OK" greeting. */
  greetingMs: number;
  /** No byte from the server for this long while a command waits: the connection is dead. */
  socketMs: number;
}

/**
 * Short enough that a dead server is noticed within one sender or reconciler cycle, long enough
 * for a slow hosted IMAP (searching a large Sent folder can take seconds).
 */
export const defaultImapTimeouts: ImapTimeouts = { connectMs: 15_000, greetingMs: 15_000, socketMs: 60_000 };

/**
 * imapflow's options for an account and one access token (XOAUTH2) or the password; `extra`
 * overrides them for connections that live long (the sync's IDLE watch) or enable extensions.
 */
export function imapFlowOptions(account: ImapAccount, accessToken?: string, extra: Partial<ImapFlowOptions> = {}): ImapFlowOptions {
  const t = { ...defaultImapTimeouts, ...account.timeouts };
  const { endpoint } = account;
  return {
    host: endpoint.host,
    port: endpoint.port,
    secure: endpoint.security === 'tls',
    // starttls: the upgrade is required, so a man in the middle who strips STARTTLS from the
    // capability list gets a failed connection instead of the password in clear (imapflow's
    // doSTARTTLS). none: never upgrade (loopback test servers only, settings.ts).
    doSTARTTLS: endpoint.security === 'starttls' ? true : endpoint.security === 'none' ? false : undefined,
    tls: { rejectUnauthorized: !endpoint.allowSelfSigned },
    auth:
      account.auth.kind === 'password'
        ? { user: account.username, pass: account.auth.password }
        : { user: account.username, accessToken: accessToken ?? '' },
    logger: false,
    // One command at a time, then logout: IDLE between them would only add round trips.
    disableAutoIdle: true,
    connectionTimeout: t.connectMs,
    greetingTimeout: t.greetingMs,
    socketTimeout: t.socketMs,
    ...extra,
  };
}

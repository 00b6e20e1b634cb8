import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { MailAuth } from '../../mailbox/imap/account.ts';
import { parseMailboxSettings } from '../../mailbox/settings.ts';
import type { Credential } from '../../mailbox/vault.ts';
import type { MailboxTable } from '../../store/schema.ts';
import { gmailTransport } from './gmail.ts';
import { graphTransport } from './graph.ts';
import { createSmtpTransport, type SmtpTimeouts } from './smtp.ts';
import type { AccessTokenProvider, Transport } from './transport.ts';

/**
 * Every transport, one per mailbox provider (mailbox.provider), and the one place a mailbox's
 * row and credential become a Transport:
 *   smtp_imap  smtp.ts   SMTP submission, Sent folder over IMAP
 *   gmail      gmail.ts  Gmail API users.messages.send / list rfc822msgid:
 *   graph      graph.ts  Microsoft Graph sendMail / messages?$filter=internetMessageId
 */

export type Provider = MailboxTable['provider'];

/** What a transport needs to know about its mailbox (a `mailbox` row's columns). */
export interface TransportMailbox {
  id: string;
  email: string;
  provider: Provider;
  /** mailbox.settings (jsonb): servers and serverSavesSent for smtp_imap (mailbox/settings.ts). */
  settings: unknown;
}

export interface TransportDeps {
  clock: Clock;
  logger?: Logger;
  /** The mailbox's credential from the vault: a password (smtp_imap) or an OAuth grant. */
  credential: Credential | undefined;
  /**
   * Fresh access tokens for an OAuth mailbox (the token refresher owns the refresh token and
   * writes the new access token back to the vault). Required for gmail, graph, and XOAUTH2 on
   * smtp_imap.
   */
  tokens?: AccessTokenProvider;
  /** Emulators in tests; the providers' public endpoints otherwise. */
  baseUrls?: { gmail?: string; graph?: string };
  smtpTimeouts?: Partial<SmtpTimeouts>;
}

type Factory = (mailbox: TransportMailbox, deps: TransportDeps) => Transport;

export const transports: Record<Provider, Factory> = {
  smtp_imap(mailbox, deps) {
    const settings = parseMailboxSettings(mailbox.settings);
    if (!settings.smtp) throw cadenzaError('CONFIG_INVALID', `mailbox ${mailbox.email} has no SMTP settings`, { mailboxId: mailbox.id });
    const { username, auth } = smtpAuth(mailbox, deps);
    return createSmtpTransport(
      {
        smtp: settings.smtp,
        imap: settings.imap ?? null,
        username,
        auth,
        serverSavesSent: settings.serverSavesSent,
        ...(deps.smtpTimeouts ? { timeouts: deps.smtpTimeouts } : {}),
      },
      { clock: deps.clock, ...(deps.logger ? { logger: deps.logger } : {}) },
    );
  },
  gmail(mailbox, deps) {
    return gmailTransport({ tokens: tokensOf(mailbox, deps), clock: deps.clock, userId: 'me', ...(deps.baseUrls?.gmail ? { baseUrl: deps.baseUrls.gmail } : {}) });
  },
  graph(mailbox, deps) {
    return graphTransport({ tokens: tokensOf(mailbox, deps), clock: deps.clock, user: 'me', ...(deps.baseUrls?.graph ? { baseUrl: deps.baseUrls.graph } : {}) });
  },
};

/** The transport for a mailbox. Throws CONFIG_INVALID when its settings or credential cannot make one. */
export function createTransport(mailbox: TransportMailbox, deps: TransportDeps): Transport {
  const factory = (transports as Record<string, Factory | undefined>)[mailbox.provider];
  if (!factory) throw cadenzaError('CONFIG_INVALID', `unknown mailbox provider '${String(mailbox.provider)}'`, { mailboxId: mailbox.id });
  return factory(mailbox, deps);
}

function smtpAuth(mailbox: TransportMailbox, deps: TransportDeps): { username: string; auth: MailAuth } {
  const c = deps.credential;
  if (!c) throw cadenzaError('CONFIG_INVALID', `mailbox ${mailbox.email} has no credential in the vault`, { mailboxId: mailbox.id });
  if (c.kind === 'password') return { username: c.username || mailbox.email, auth: { kind: 'password', password: c.password } };
  // An OAuth grant on an SMTP/IMAP mailbox: SASL XOAUTH2 as the mailbox's address.
  return { username: mailbox.email, auth: { kind: 'xoauth2', accessToken: tokensOf(mailbox, deps) } };
}

function tokensOf(mailbox: TransportMailbox, deps: TransportDeps): AccessTokenProvider {
  if (!deps.tokens) throw cadenzaError('CONFIG_INVALID', `mailbox ${mailbox.email} (${mailbox.provider}) needs an access-token provider`, { mailboxId: mailbox.id });
  return deps.tokens;
}

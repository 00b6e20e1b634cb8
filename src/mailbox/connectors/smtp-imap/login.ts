import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import XOAuth2 from 'nodemailer/lib/xoauth2/index.js';
import { cadenzaError } from '../../../common/errors.ts';
import type { AccessTokenProvider } from '../../access-token.ts';
import type { MailAuth } from '../../imap/account.ts';
import type { Credential } from '../../vault.ts';

/**
 * How to sign in to a mailbox's SMTP and IMAP servers, the one place for both protocols (and
 * `cadenza mailbox test`): its password, as the vault's username or else the mailbox's address;
 * or, for a mailbox connected with OAuth, SASL XOAUTH2 as the mailbox's address with a token from
 * the provider (Gmail and Microsoft 365 want the address the grant names). Throws CONFIG_INVALID
 * when there is nothing to sign in with. smtpLogin turns it into nodemailer's login data, for the
 * SMTP sending part and the connection test alike.
 */
export function mailLogin(mailbox: { id: string; email: string }, credential: Credential | undefined, tokens: AccessTokenProvider | undefined): { username: string; auth: MailAuth } {
  if (!credential) throw cadenzaError('CONFIG_INVALID', `mailbox ${mailbox.email} has no credential in the vault`, { mailboxId: mailbox.id });
  if (credential.kind === 'password') return { username: credential.username || mailbox.email, auth: { kind: 'password', password: credential.password } };
  if (!tokens) throw cadenzaError('CONFIG_INVALID', `mailbox ${mailbox.email} has an OAuth grant and this process has no token source for it`, { mailboxId: mailbox.id });
  return { username: mailbox.email, auth: { kind: 'xoauth2', accessToken: tokens } };
}

/** nodemailer's login data: the password, or XOAUTH2 with a token from the provider. */
export function smtpLogin(auth: MailAuth, username: string): Parameters<SMTPConnection['login']>[0] {
  if (auth.kind === 'password') return { credentials: { user: username, pass: auth.password } };
  // nodemailer asks provisionCallback for a token (renew = false), and again with renew = true
  // when the server refuses it (its XOAUTH2 retry), which is our forceRefresh.
  const oauth2 = new XOAuth2({
    user: username,
    provisionCallback: (_user, renew, cb) => {
      auth.accessToken({ forceRefresh: renew }).then(
        (token) => cb(null, token, 0),
        (e: unknown) => cb(e instanceof Error ? e : new Error(String(e)), '', 0),
      );
    },
  });
  return { oauth2 } as Parameters<SMTPConnection['login']>[0];
}

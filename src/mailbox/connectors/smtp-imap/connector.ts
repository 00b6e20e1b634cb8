import { parseMailboxSettings } from '../../settings.ts';
import { createImapSync } from '../../sync/imap-sync.ts';
import { assembleConnector, partOrReason } from '../assemble.ts';
import type { ConnectorFactory } from '../connector.ts';
import { imapFolderActions } from './folder-actions.ts';
import { mailLogin } from './login.ts';
import { createSmtpTransport } from './smtp-transport.ts';

/**
 * An SMTP/IMAP mailbox (mailbox.provider 'smtp_imap'): any host, or Gmail and Microsoft 365 over
 * the protocols with XOAUTH2. Its parts, from mailbox.settings and the credential (login.ts: a
 * password, or XOAUTH2 as the mailbox's address):
 *   send     SMTP submission (smtp-transport.ts), the Sent copy appended over IMAP first when the
 *            server does not file one (serverSavesSent false), findSent and the last look over IMAP
 *   sync     IMAP pull and IDLE watch (mailbox/sync/imap-sync.ts)
 *   folders  IMAP UID MOVE and STORE (folder-actions.ts)
 * Settings without an SMTP server leave it unable to send, without an IMAP server unable to sync
 * or act on folders (`lacks`): `cadenza mailbox add` accepts either alone.
 */
export const smtpImapConnector: ConnectorFactory = (mailbox, deps) => {
  const settings = parseMailboxSettings(mailbox.settings);
  const { username, auth } = mailLogin(mailbox, deps.credential, deps.tokens);
  const logger = deps.logger ? { logger: deps.logger } : {};
  const account = settings.imap ? { endpoint: settings.imap, username, auth } : null;
  const noImap = `mailbox ${mailbox.email} has no IMAP server in its settings`;
  const smtp = settings.smtp;
  return assembleConnector({
    mailbox,
    kind: 'smtp',
    sentProof: settings.serverSavesSent ? 'provider_copy' : 'copy_first',
    transport: smtp
      ? partOrReason(() =>
          createSmtpTransport(
            { smtp, imap: settings.imap ?? null, username, auth, serverSavesSent: settings.serverSavesSent, ...(deps.smtpTimeouts ? { timeouts: deps.smtpTimeouts } : {}) },
            { clock: deps.clock, ...logger },
          ),
        )
      : `mailbox ${mailbox.email} has no SMTP server in its settings`,
    sync: account ? createImapSync({ account, clock: deps.clock, random: deps.random, ...logger }) : noImap,
    folders: account ? imapFolderActions(account, logger) : noImap,
  });
};

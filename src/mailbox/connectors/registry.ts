import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import type { Credential, Vault } from '../vault.ts';
import type { Ability, ConnectorDeps, ConnectorFactory, ConnectorSetup, MailboxConnector, MailboxRow, Provider } from './connector.ts';
import { gmailConnector } from './gmail/connector.ts';
import { graphConnector } from './graph/connector.ts';
import { smtpImapConnector } from './smtp-imap/connector.ts';

/**
 * Every mailbox connector, one per provider (mailbox.provider), and the one place a mailbox row,
 * its credential and a token source become a MailboxConnector. Everything that needs one comes
 * here: the sender and sync pools (mailbox-pool.ts), inbox replies (sending/reply.ts), the demo.
 *   smtp_imap  smtp-imap/  SMTP submission, IMAP sync and folders, password or XOAUTH2
 *   gmail      gmail/      Gmail API: messages.send, history.list, messages.modify
 *   graph      graph/      Microsoft Graph: sendMail, delta, move and PATCH
 * A provider is added with its folder and one line here (and its name in the mailbox table's
 * provider check, store/migrations).
 */
export const connectors: Record<Provider, ConnectorFactory> = {
  smtp_imap: smtpImapConnector,
  gmail: gmailConnector,
  graph: graphConnector,
};

/**
 * The connector for a mailbox. Throws CONFIG_INVALID when the mailbox cannot have one (an unknown
 * provider, no credential, an OAuth grant without a token source) or lacks one of `needs` (an
 * SMTP/IMAP mailbox without the server the caller's role uses); INVALID_INPUT for settings that do
 * not parse. Opens nothing.
 */
export function createConnector(mailbox: MailboxRow, deps: ConnectorDeps, needs: readonly Ability[] = []): MailboxConnector {
  const factory = Object.hasOwn(connectors, mailbox.provider) ? connectors[mailbox.provider] : undefined;
  if (!factory) throw cadenzaError('CONFIG_INVALID', `unknown mailbox provider '${String(mailbox.provider)}'`, { mailboxId: mailbox.id });
  const connector = factory(mailbox, deps);
  for (const ability of needs) {
    const why = connector.lacks(ability);
    if (why === null) continue;
    void connector.close().catch(() => undefined);
    throw cadenzaError('CONFIG_INVALID', why, { mailboxId: mailbox.id, ability });
  }
  return connector;
}

/**
 * A connector's deps from what the process knows (`setup`) and the mailbox's credential: the
 * token provider only for an OAuth grant (a password mailbox never asks for tokens).
 */
export function connectorDeps(mailbox: MailboxRow, credential: Credential | undefined, base: { clock: Clock; random: Random; logger?: Logger }, setup: ConnectorSetup = {}): ConnectorDeps {
  const { tokens, ...options } = setup;
  return {
    ...options,
    ...base,
    credential,
    ...(credential?.kind === 'oauth' && tokens ? { tokens: tokens(mailbox, credential) } : {}),
  };
}

/** Reads the mailbox's credential from the vault and builds its connector (createConnector, same errors). */
export async function buildConnector(
  mailbox: MailboxRow,
  o: { vault: Pick<Vault, 'get'>; clock: Clock; random: Random; logger?: Logger; setup?: ConnectorSetup; needs?: readonly Ability[] },
): Promise<MailboxConnector> {
  const credential = await o.vault.get(mailbox.id);
  return createConnector(mailbox, connectorDeps(mailbox, credential, { clock: o.clock, random: o.random, ...(o.logger ? { logger: o.logger } : {}) }, o.setup), o.needs);
}

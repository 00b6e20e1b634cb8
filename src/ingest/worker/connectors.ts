import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import { parseMailboxSettings } from '../../mailbox/settings.ts';
import { createImapSync } from '../../mailbox/sync/imap-sync.ts';
import type { MailboxSync } from '../../mailbox/sync/source.ts';
import type { Credential } from '../../mailbox/vault.ts';

/** A mailbox as the sync worker sees it. */
export interface SyncMailbox {
  id: string;
  workspaceId: string;
  email: string;
  provider: 'smtp_imap' | 'gmail' | 'graph';
  settings: unknown;
}

export interface ConnectorDeps {
  credential: Credential | undefined;
  clock: Clock;
  random: Random;
  log?: Logger;
}

export type ConnectorFactory = (mailbox: SyncMailbox, deps: ConnectorDeps) => MailboxSync;

/**
 * One sync connector per provider, chosen by `mailbox.provider`. The IMAP one signs in with the
 * vault's decrypted password (never logged). Gmail and Graph mailboxes need their OAuth token
 * source and API base URL, which their connectors take directly; until a mailbox's OAuth grant is
 * wired to them, the pool is given a factory for them (`connectorFor`), and without one a mailbox
 * of those providers records a clear sync error instead of crashing the pool.
 */
export const connectors: Record<SyncMailbox['provider'], ConnectorFactory> = {
  smtp_imap(m, deps) {
    const settings = parseMailboxSettings(m.settings);
    if (!settings.imap) throw cadenzaError('INVALID_INPUT', `mailbox ${m.email} has no IMAP server in its settings`, { mailboxId: m.id });
    const c = deps.credential;
    if (!c || c.kind !== 'password') throw cadenzaError('MAILBOX_AUTH_FAILED', `mailbox ${m.email} has no stored password`, { mailboxId: m.id });
    return createImapSync({
      account: { endpoint: settings.imap, username: c.username, auth: { kind: 'password', password: c.password } },
      clock: deps.clock,
      random: deps.random,
      ...(deps.log ? { logger: deps.log } : {}),
    });
  },
  gmail(m) {
    throw cadenzaError('MAILBOX_UNAVAILABLE', `no Gmail sync is configured for ${m.email} in this process (connectorFor)`, { mailboxId: m.id });
  },
  graph(m) {
    throw cadenzaError('MAILBOX_UNAVAILABLE', `no Microsoft Graph sync is configured for ${m.email} in this process (connectorFor)`, { mailboxId: m.id });
  },
};

import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import { transports, type TransportDeps, type TransportMailbox } from '../../sending/transports/registry.ts';
import type { Transport } from '../../sending/transports/transport.ts';
import type { MailAuth } from '../imap/account.ts';
import { parseMailboxSettings } from '../settings.ts';
import { gmailSync } from '../sync/gmail-sync.ts';
import { graphSync } from '../sync/graph-sync.ts';
import { createImapSync } from '../sync/imap-sync.ts';
import type { PushRegistry } from '../sync/push-registry.ts';
import { graphClientState } from '../sync/push-relay.ts';
import type { MailboxSync } from '../sync/source.ts';
import type { Credential } from '../vault.ts';
import type { MailboxTokens } from './mailbox-tokens.ts';

/**
 * Where OAuth mailboxes meet the code that sends and syncs: the one token provider
 * (MailboxTokens) is handed to whatever needs an access token, through the injection points the
 * sender pool (transportFor) and the sync pool (connectorFor) already have. Password mailboxes
 * pass through unchanged.
 */

export interface OAuthWiring {
  tokens: MailboxTokens;
  /** Emulators in tests; the providers' public endpoints otherwise. */
  baseUrls?: { gmail?: string; graph?: string };
  /** Push for Gmail and Graph sync (push-settings.ts); a provider without its setting is polled. */
  push?: ConnectorPush;
}

export interface ConnectorPush {
  /** The process's registry, shared with the push routes (relayed between processes: push-relay.ts). */
  registry: PushRegistry;
  /** The key of each mailbox's Graph clientState, so that any process can check a notification. */
  secret: string;
  gmailTopic?: string;
  graphNotificationUrl?: string;
}

/**
 * How to sign in to a mailbox's IMAP or SMTP server: its password, or, for a mailbox connected
 * with OAuth, SASL XOAUTH2 as the mailbox's address with a token from the provider. The
 * credentials resolver for the IMAP connect and SMTP transport paths.
 */
export function mailAuthFor(mailbox: { id: string; email: string }, credential: Credential, tokens: MailboxTokens): { username: string; auth: MailAuth } {
  if (credential.kind === 'password') return { username: credential.username || mailbox.email, auth: { kind: 'password', password: credential.password } };
  return { username: mailbox.email, auth: { kind: 'xoauth2', accessToken: tokens.forMailbox(mailbox.id) } };
}

/** The sender pool's transportFor: the registry's transport, with the mailbox's own token provider when it has an OAuth grant. */
export function oauthTransportFor(w: OAuthWiring): (mailbox: TransportMailbox, deps: TransportDeps) => Transport {
  return (mailbox, deps) => {
    const oauth = deps.credential?.kind === 'oauth';
    return transports[mailbox.provider](mailbox, {
      ...deps,
      ...(oauth ? { tokens: w.tokens.forMailbox(mailbox.id) } : {}),
      baseUrls: { ...w.baseUrls, ...deps.baseUrls },
    });
  };
}

/** A mailbox and what a sync connector is built from (the sync pool's connectorFor shape). */
export interface SyncMailboxRef {
  id: string;
  email: string;
  provider: 'smtp_imap' | 'gmail' | 'graph';
  settings: unknown;
}
export interface SyncConnectorDeps {
  credential: Credential | undefined;
  clock: Clock;
  random: Random;
  log?: Logger;
}
export type SyncConnectorFactory<M extends SyncMailboxRef = SyncMailboxRef> = (mailbox: M, deps: SyncConnectorDeps) => MailboxSync;

/**
 * The sync pool's connectorFor: Gmail API, Graph and IMAP (over XOAUTH2) sync for OAuth mailboxes,
 * each asking MailboxTokens for its tokens; `fallback` builds everything else (password mailboxes,
 * and providers whose connector is wired elsewhere).
 */
export function oauthConnectorFor<M extends SyncMailboxRef>(w: OAuthWiring, fallback: SyncConnectorFactory<M>): SyncConnectorFactory<M> {
  return (mailbox, deps) => {
    const c = deps.credential;
    if (c?.kind !== 'oauth') return fallback(mailbox, deps);
    const push = w.push;
    if (mailbox.provider === 'gmail') {
      return gmailSync({
        tokens: w.tokens.forMailbox(mailbox.id),
        userId: 'me',
        clock: deps.clock,
        ...(w.baseUrls?.gmail ? { baseUrl: w.baseUrls.gmail } : {}),
        ...(push?.gmailTopic ? { push: { topicName: push.gmailTopic, registry: push.registry } } : {}),
      });
    }
    if (mailbox.provider === 'graph') {
      return graphSync({
        tokens: w.tokens.forMailbox(mailbox.id),
        user: 'me',
        clock: deps.clock,
        ...(w.baseUrls?.graph ? { baseUrl: w.baseUrls.graph } : {}),
        ...(push?.graphNotificationUrl
          ? { push: { notificationUrl: push.graphNotificationUrl, registry: push.registry, clientState: graphClientState(push.secret, mailbox.id) } }
          : {}),
      });
    }
    if (mailbox.provider === 'smtp_imap') {
      const settings = parseMailboxSettings(mailbox.settings);
      if (settings.imap) {
        const { username, auth } = mailAuthFor(mailbox, c, w.tokens);
        return createImapSync({ account: { endpoint: settings.imap, username, auth }, clock: deps.clock, random: deps.random, ...(deps.log ? { logger: deps.log } : {}) });
      }
    }
    return fallback(mailbox, deps);
  };
}

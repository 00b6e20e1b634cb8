import { cadenzaError, isCadenzaError } from '../../common/errors.ts';
import type { MailboxSync } from '../sync/source.ts';
import type { Ability, FolderActions, MailboxConnector, MailboxRow, Transport } from './connector.ts';
import type { SentProof } from './outcomes.ts';

/**
 * Puts a provider's parts together into one MailboxConnector. A part the mailbox's settings do
 * not allow is given as the reason it is missing (a string): `lacks` answers it, and calling the
 * part throws CONFIG_INVALID, a programming error (the caller asks `lacks` first, registry.ts
 * `createConnector(…, needs)` does it for the pools).
 */
export interface ConnectorParts {
  mailbox: MailboxRow;
  kind: Transport['kind'];
  sentProof: SentProof;
  transport: Transport | string;
  sync: MailboxSync | string;
  folders: FolderActions | string;
}

export function assembleConnector(p: ConnectorParts): MailboxConnector {
  const missing = (ability: Ability, why: string) =>
    cadenzaError('CONFIG_INVALID', `mailbox ${p.mailbox.email} cannot ${verb[ability]}: ${why}`, { mailboxId: p.mailbox.id, ability });
  const transport = (): Transport => {
    if (typeof p.transport === 'string') throw missing('send', p.transport);
    return p.transport;
  };
  const sync = (): MailboxSync => {
    if (typeof p.sync === 'string') throw missing('sync', p.sync);
    return p.sync;
  };
  const folders = (): FolderActions => {
    if (typeof p.folders === 'string') throw missing('folders', p.folders);
    return p.folders;
  };
  const parts = [p.transport, p.sync, p.folders].filter((x): x is Transport | MailboxSync | FolderActions => typeof x !== 'string');
  const watch = typeof p.sync === 'string' ? undefined : p.sync.watch?.bind(p.sync);
  return {
    provider: p.mailbox.provider,
    kind: p.kind,
    sentProof: p.sentProof,
    lacks: (ability) => {
      const part = ability === 'send' ? p.transport : ability === 'sync' ? p.sync : p.folders;
      return typeof part === 'string' ? part : null;
    },
    send: (raw, envelope, ctx) => transport().send(raw, envelope, ctx),
    findSent: (messageId, opts) => transport().findSent(messageId, opts),
    recentMailFrom: (q) => transport().recentMailFrom(q),
    sentSince: async (since, onPage) => {
      const t = transport();
      return t.sentSince ? t.sentSince(since, onPage) : { status: 'unavailable', reason: `listing the Sent folder of a ${p.mailbox.provider} mailbox is not supported`, copies: 0 };
    },
    pull: (cursor, options) => sync().pull(cursor, options),
    ...(watch ? { watch } : {}),
    moveToInbox: (key, opts) => folders().moveToInbox(key, opts),
    flag: (key, opts) => folders().flag(key, opts),
    markRead: (key, opts) => folders().markRead(key, opts),
    async close() {
      await Promise.allSettled(parts.map((x) => x.close()));
    },
  };
}

/** Builds a part, or gives the reason the settings do not allow it (a CONFIG_INVALID from its constructor). */
export function partOrReason<T>(build: () => T): T | string {
  try {
    return build();
  } catch (e) {
    if (isCadenzaError(e, 'CONFIG_INVALID')) return e.message;
    throw e;
  }
}

const verb: Record<Ability, string> = { send: 'send', sync: 'be synced', folders: 'move or flag messages' };

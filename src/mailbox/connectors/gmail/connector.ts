import { gmailSync } from '../../sync/gmail-sync.ts';
import { assembleConnector } from '../assemble.ts';
import type { ConnectorFactory } from '../connector.ts';
import { requireTokens } from '../tokens.ts';
import { gmailFolderActions } from './folder-actions.ts';
import { gmailTransport } from './gmail-transport.ts';

/**
 * A Gmail mailbox over the Gmail API (mailbox.provider 'gmail', connected with OAuth), its three
 * parts on one token provider:
 *   send     users.messages.send, the Sent search `rfc822msgid:`, the last look `from: after:`
 *            (gmail-transport.ts)
 *   sync     history.list from the stored historyId, users.watch push through Pub/Sub when the
 *            process has a topic (mailbox/sync/gmail-sync.ts)
 *   folders  users.messages.modify (folder-actions.ts)
 */
export const gmailConnector: ConnectorFactory = (mailbox, deps) => {
  const api = {
    tokens: requireTokens(mailbox, deps),
    clock: deps.clock,
    userId: 'me',
    ...(deps.baseUrls?.gmail ? { baseUrl: deps.baseUrls.gmail } : {}),
    ...(deps.httpTimeoutMs ? { timeoutMs: deps.httpTimeoutMs } : {}),
  };
  const push = deps.push;
  return assembleConnector({
    mailbox,
    kind: 'gmail',
    sentProof: 'provider_copy',
    transport: gmailTransport(api),
    sync: gmailSync({ ...api, ...(push?.gmailTopic ? { push: { topicName: push.gmailTopic, registry: push.registry } } : {}) }),
    folders: gmailFolderActions(api),
  });
};

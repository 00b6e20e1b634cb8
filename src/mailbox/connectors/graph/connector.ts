import { graphSync } from '../../sync/graph-sync.ts';
import { graphClientState } from '../../sync/push-relay.ts';
import { assembleConnector } from '../assemble.ts';
import type { ConnectorFactory } from '../connector.ts';
import { requireTokens } from '../tokens.ts';
import { graphFolderActions } from './folder-actions.ts';
import { graphTransport } from './graph-transport.ts';

/**
 * A Microsoft 365 mailbox over Microsoft Graph (mailbox.provider 'graph', connected with OAuth),
 * its three parts on one token provider:
 *   send     sendMail with our MIME bytes, the Sent search by internetMessageId, the last look
 *            `$filter` on from and receivedDateTime (graph-transport.ts)
 *   sync     delta per folder, change notifications when the process has a public URL for them
 *            (mailbox/sync/graph-sync.ts; the clientState is derived per mailbox, push-relay.ts)
 *   folders  move and PATCH (folder-actions.ts)
 */
export const graphConnector: ConnectorFactory = (mailbox, deps) => {
  const api = {
    tokens: requireTokens(mailbox, deps),
    clock: deps.clock,
    user: 'me',
    ...(deps.baseUrls?.graph ? { baseUrl: deps.baseUrls.graph } : {}),
    ...(deps.httpTimeoutMs ? { timeoutMs: deps.httpTimeoutMs } : {}),
  };
  const push = deps.push;
  return assembleConnector({
    mailbox,
    kind: 'graph',
    sentProof: 'provider_copy',
    transport: graphTransport(api),
    sync: graphSync({
      ...api,
      ...(push?.graphNotificationUrl ? { push: { notificationUrl: push.graphNotificationUrl, registry: push.registry, clientState: graphClientState(push.secret, mailbox.id) } } : {}),
    }),
    folders: graphFolderActions(api),
  });
};

import { graphApi, type GraphApiConfig } from '../../providers/graph/api.ts';
import { folderResult } from '../api-folder-result.ts';
import type { FolderActions } from '../connector.ts';

/**
 * The folder actions of a Microsoft 365 mailbox over Graph (connector.ts FolderActions), on the
 * immutable id the sync keys messages by (it survives the move, concepts/outlook-immutable-id.md):
 *   moveToInbox  POST /me/messages/{id}/move {"destinationId": "inbox"} (out of Junk Email)
 *   flag         PATCH /me/messages/{id} {"flag": {"flagStatus": "flagged"}}
 *   markRead     PATCH /me/messages/{id} {"isRead": true}
 * They need Mail.ReadWrite: a grant with Mail.Read only is answered 403 ErrorAccessDenied, which
 * is `forbidden` here.
 */
const grantCodes = new Set(['ErrorAccessDenied', 'AccessDenied', 'Authorization_RequestDenied', 'ErrorInsufficientPermissions']);

export function graphFolderActions(cfg: GraphApiConfig): FolderActions {
  const api = graphApi(cfg);
  const opts = (signal?: AbortSignal) => (signal ? { signal } : {});
  return {
    moveToInbox: async (key, o) => folderResult(await api.move({ id: key, destination: 'inbox', immutableIds: true }, opts(o?.signal)), 'Graph', grantCodes, (m) => m.id),
    flag: async (key, o) => folderResult(await api.update({ id: key, flagStatus: 'flagged', immutableIds: true }, opts(o?.signal)), 'Graph', grantCodes, (m) => m.id),
    markRead: async (key, o) => folderResult(await api.update({ id: key, isRead: true, immutableIds: true }, opts(o?.signal)), 'Graph', grantCodes, (m) => m.id),
    // Nothing to release: every request has its own connection (providers/http.ts).
    close: async () => undefined,
  };
}

import { useState } from 'react';
import { ws } from '../api.ts';

/**
 * A message's HTML in a frame: the server rebuilds it from an allowlist and sends it under a CSP
 * that forbids scripts (GET …/inbox/messages/{id}/frame, src/inbox/reply-html.ts); the frame is
 * sandboxed without allow-scripts or allow-same-origin, so even markup that slipped through could
 * neither run nor reach the app. Remote images stay blocked until the reader asks, for this
 * message only. Links open in a new window, outside the sandbox.
 */
export function InboxFrame({ workspaceId, messageId, title, blockedImages }: { workspaceId: string; messageId: string; title: string; blockedImages: number | null }) {
  const [images, setImages] = useState(false);
  const src = ws(workspaceId, `inbox/messages/${messageId}/frame${images ? '?images=true' : ''}`);
  return (
    <div className="mail-frame">
      {!images && blockedImages !== null && blockedImages > 0 && (
        <div className="row small mail-images">
          <span className="muted">
            {blockedImages} remote image{blockedImages === 1 ? '' : 's'} blocked (they can tell the sender you read it).
          </span>
          <button type="button" className="btn btn-quiet" onClick={() => setImages(true)}>
            Load images for this message
          </button>
        </div>
      )}
      <iframe key={src} src={src} title={title} sandbox="allow-popups allow-popups-to-escape-sandbox" referrerPolicy="no-referrer" loading="lazy" />
    </div>
  );
}

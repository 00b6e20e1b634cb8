import { useId, useRef, useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import type { InboxMessage } from '../types.ts';
import { ErrorNote } from '../ui/parts.tsx';

/** 128 random bits as hex: crypto.randomUUID exists only on https or localhost, this everywhere. */
function newKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A plain-text reply to one inbound message, sent by the server from the mailbox that received it,
 * in the same thread, to the message's Reply-To (else its sender); "Reply all" copies the others
 * (POST …/inbox/messages/{id}/reply). Each draft carries an idempotency key, kept while its text
 * and recipients stay the same: a second click, or sending again after "not sent" or a dropped
 * connection, never sends it twice. Keyboard: Ctrl+Enter (⌘+Enter) sends, Escape closes.
 */
export function InboxReply({ workspaceId, message, onSent }: { workspaceId: string; message: InboxMessage; onSent: () => void }) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [replyAll, setReplyAll] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [sent, setSent] = useState<string>();
  const [wasOpen, setWasOpen] = useState(false);
  const draftKey = useRef<{ draft: string; key: string } | null>(null);
  // A second Ctrl+Enter may come before React re-renders with busy set.
  const inFlight = useRef(false);
  const hintId = useId();
  const to = message.replyTo.length ? message.replyTo : message.from ? [message.from] : [];
  // Someone besides this mailbox and the sender was addressed: reply all means something.
  const others = [...message.to, ...message.cc].filter((a) => ![...to, message.mailboxEmail ?? ''].some((x) => x.toLowerCase() === a.toLowerCase()));
  const close = () => {
    setOpen(false);
    setError(undefined);
  };
  if (!open) {
    return (
      <div className="row">
        {/* Focus comes back here after sending or closing, so the keyboard carries on from the message. */}
        <button type="button" className="btn btn-quiet" data-action="reply" autoFocus={wasOpen} onClick={() => (setOpen(true), setWasOpen(true))} aria-label={`Reply to ${to.join(', ') || 'the sender'}`}>
          Reply
        </button>
        {sent && (
          <span className="muted small" role="status">
            {sent}
          </span>
        )}
      </div>
    );
  }
  const send = async () => {
    if (inFlight.current || text.trim() === '') return;
    inFlight.current = true;
    const draft = JSON.stringify([text, replyAll && others.length > 0]);
    if (draftKey.current?.draft !== draft) draftKey.current = { draft, key: newKey() };
    setBusy(true);
    setError(undefined);
    try {
      const r = await call('POST /api/workspaces/:workspaceId/inbox/messages/:messageId/reply', ws(workspaceId, `inbox/messages/${message.id}/reply`), { text, replyAll: replyAll && others.length > 0, idempotencyKey: draftKey.current.key });
      const whom = `${r.to.join(', ')}${r.cc.length ? `, cc ${r.cc.join(', ')}` : ''}`;
      setSent(`${r.replayed ? 'Already sent' : 'Sent'} to ${whom} from ${message.mailboxEmail ?? 'the mailbox'}: ${r.subject}${r.confirmedBy === 'sent_folder' ? ' (confirmed in the Sent folder)' : ''}`);
      setText('');
      setReplyAll(false);
      draftKey.current = null;
      setOpen(false);
      onSent();
    } catch (e) {
      // The draft and its key stay: sending again is the safe retry the server describes.
      setError(errorMessage(e));
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };
  return (
    <form
      className="inbox-reply"
      aria-label={`Reply to ${message.from ?? 'the sender'}`}
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          void send();
        } else if (e.key === 'Escape' && !busy) {
          e.preventDefault();
          close();
        }
      }}
    >
      <ErrorNote error={error} />
      <div className="muted small" id={hintId}>
        To {to.join(', ') || 'the sender'}
        {message.replyTo.length > 0 && message.from && !message.replyTo.includes(message.from) ? ` (the Reply-To of ${message.from})` : ''}, from {message.mailboxEmail ?? 'this mailbox'}. Ctrl+Enter sends, Escape closes.
      </div>
      {/* Opened on purpose (the Reply button, or r in the inbox): the next keystrokes are the reply. */}
      <textarea
        autoFocus
        rows={4}
        value={text}
        onChange={(e) => setText(e.target.value)}
        aria-label={`Your reply to ${message.from ?? 'the sender'}`}
        aria-describedby={hintId}
        aria-keyshortcuts="Control+Enter Meta+Enter"
        placeholder={`Reply from ${message.mailboxEmail ?? 'this mailbox'}…`}
      />
      <div className="row">
        {others.length > 0 && (
          <label className="small">
            <input type="checkbox" checked={replyAll} onChange={(e) => setReplyAll(e.target.checked)} disabled={busy} /> Reply all (copy {others.join(', ')}; never your workspace's own mailboxes)
          </label>
        )}
        <button type="submit" className="btn btn-primary" disabled={busy || text.trim() === ''}>
          {busy ? 'Sending…' : error ? 'Send again' : 'Send reply'}
        </button>
        <button type="button" className="btn btn-quiet" onClick={close} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

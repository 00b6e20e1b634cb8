import { useState } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import type { InboxMessage } from '../types.ts';
import { ErrorNote } from '../ui/parts.tsx';

/**
 * A plain-text reply to one inbound message, sent by the server from the mailbox that received it,
 * in the same thread (POST …/inbox/messages/{id}/reply). Closed until asked for; one send per click.
 */
export function InboxReply({ workspaceId, message, onSent }: { workspaceId: string; message: InboxMessage; onSent: () => void }) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [sent, setSent] = useState<string>();
  if (!open) {
    return (
      <div className="row">
        <button type="button" className="btn btn-quiet" data-action="reply" onClick={() => setOpen(true)} aria-label={`Reply to ${message.from ?? 'the sender'}`}>
          Reply
        </button>
        {sent && <span className="muted small" role="status">{sent}</span>}
      </div>
    );
  }
  const send = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const r = await api<{ to: string; subject: string }>('POST', ws(workspaceId, `inbox/messages/${message.id}/reply`), { text });
      setSent(`Sent to ${r.to} from ${message.mailboxEmail ?? 'the mailbox'}: ${r.subject}`);
      setText('');
      setOpen(false);
      onSent();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="inbox-reply"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <ErrorNote error={error} />
      {/* Opened on purpose (the Reply button, or r in the inbox): the next keystrokes are the reply. */}
      <textarea autoFocus rows={4} value={text} onChange={(e) => setText(e.target.value)} aria-label={`Your reply to ${message.from ?? 'the sender'}`} placeholder={`Reply from ${message.mailboxEmail ?? 'this mailbox'}…`} />
      <div className="row">
        <button type="submit" className="btn btn-primary" disabled={busy || text.trim() === ''}>
          {busy ? 'Sending…' : 'Send reply'}
        </button>
        <button type="button" className="btn btn-quiet" onClick={() => setOpen(false)} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}

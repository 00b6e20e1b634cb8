import { useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import type { InboxNote } from '../types.ts';
import { ErrorNote, when } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { useSubmit } from '../ui/use-submit.ts';

/** Internal notes on a conversation: the team sees them, the prospect never does (POST …/notes, DELETE …/inbox/notes/{id}). */
export function InboxNotes({ workspaceId, messageId, notes, me, isAdmin, onChange }: { workspaceId: string; messageId: string; notes: InboxNote[]; me: string | null; isAdmin: boolean; onChange: () => void }) {
  const [text, setText] = useState('');
  const add = useSubmit(async () => {
    await call('POST /api/workspaces/:workspaceId/inbox/messages/:messageId/notes', ws(workspaceId, `inbox/messages/${messageId}/notes`), { body: text.trim() });
    setText('');
    onChange();
  });
  const { ask, dialog } = useConfirm();
  const remove = async (n: InboxNote) => {
    const excerpt = n.body.length > 120 ? `${n.body.slice(0, 120)}…` : n.body;
    if (!(await ask({ title: `Delete the note of ${when(n.at)}?`, body: `“${excerpt}” goes for the whole team.`, action: 'Delete note' }))) return;
    await call('DELETE /api/workspaces/:workspaceId/inbox/notes/:noteId', ws(workspaceId, `inbox/notes/${n.id}`)).then(onChange, (e: unknown) => add.setError(errorMessage(e)));
  };
  return (
    <section className="notes" aria-label="Internal notes">
      <h3>Internal notes</h3>
      {dialog}
      {notes.length === 0 && <p className="muted small">None yet. Notes are for the team; they are never sent.</p>}
      <ul className="plain">
        {notes.map((n) => (
          <li key={n.id} className="note">
            <div className="small muted">
              {n.author ?? 'A former member'} · {when(n.at)}
              {(isAdmin || n.authorId === me) && (
                <button type="button" className="btn btn-quiet btn-small" onClick={() => void remove(n)} aria-label={`Delete the note of ${when(n.at)}`}>
                  Delete
                </button>
              )}
            </div>
            <p className="note-body">{n.body}</p>
          </li>
        ))}
      </ul>
      <form className="stack" onSubmit={(e) => void add.submit(e)}>
        <ErrorNote error={add.error} />
        <textarea rows={2} value={text} onChange={(e) => setText(e.target.value)} aria-label="New internal note" maxLength={5000} placeholder="Note for the team…" />
        <div className="row">
          <button type="submit" className="btn" disabled={add.busy || !text.trim()}>
            Add note
          </button>
        </div>
      </form>
    </section>
  );
}

import { api, ws } from '../api.ts';
import type { InboxMessage, ThreadEntry } from '../types.ts';
import { Badge, ErrorNote, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';


/**
 * A message opened in the inbox: the conversation it belongs to, oldest first — what the sequence
 * sent and what came back (GET …/inbox/messages/{id}) — with the opened message's new text in full.
 */
export function InboxThread({ workspaceId, messageId, id }: { workspaceId: string; messageId: string; id: string }) {
  const d = useLoad(() => api<{ message: InboxMessage; newText: string | null; thread: ThreadEntry[] }>('GET', ws(workspaceId, `inbox/messages/${messageId}`)), [workspaceId, messageId]);
  return (
    <section id={id} className="thread" aria-label="Thread">
      <ErrorNote error={d.error} />
      {!d.data && !d.error && <p className="muted small">Loading the thread…</p>}
      {d.data && (
        <ol className="thread-list">
          {d.data.thread.map((t) => (
            <li key={t.id} className={`thread-msg thread-${t.direction}`}>
              <div className="inbox-head">
                <Badge tone={t.direction === 'outbound' ? 'info' : 'ok'}>{t.direction === 'outbound' ? 'Sent' : 'Received'}</Badge>
                <span className="strong">{t.from}</span>
                <span className="muted small inbox-when">{when(t.at)}</span>
              </div>
              <div className="inbox-subject">{t.subject ?? '(no subject)'}</div>
              {(t.id === messageId ? (d.data?.newText ?? t.excerpt) : t.excerpt) && <p className="thread-text">{t.id === messageId ? (d.data?.newText ?? t.excerpt) : t.excerpt}</p>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

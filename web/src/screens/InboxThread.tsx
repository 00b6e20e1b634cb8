import { forwardRef, useEffect, useState } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import type { InboxDetail, InboxMessage, Member, ThreadEntry } from '../types.ts';
import { Badge, ErrorNote, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { InboxFrame } from './InboxFrame.tsx';
import { InboxNotes } from './InboxNotes.tsx';
import { InboxReply } from './InboxReply.tsx';

export const labelTone = (l: string | null) => (l === 'human_reply' ? 'ok' : l === 'bounce' || l === 'unsubscribe_request' || l === 'feedback' ? 'bad' : l === 'auto_reply' ? 'warn' : 'muted');
export const words = (s: string) => s.replace(/_/g, ' ');

/** What ingestion did with the message, in the words a rep uses. */
const actionText: Record<string, { text: string; tone: 'ok' | 'warn' | 'bad' | 'info' | 'muted' }> = {
  reply: { text: 'Enrollment stopped: replied', tone: 'ok' },
  hard_bounce: { text: 'Enrollment stopped: bounced; address suppressed', tone: 'bad' },
  soft_bounce: { text: 'Soft bounce counted', tone: 'warn' },
  out_of_office: { text: 'Enrollment paused until the return date', tone: 'warn' },
  unsubscribe: { text: 'Enrollment stopped: unsubscribed', tone: 'bad' },
  complaint: { text: 'Enrollment stopped: complaint', tone: 'bad' },
  needs_review: { text: 'Waiting for your review', tone: 'warn' },
  inbox: { text: 'Not part of a sequence', tone: 'muted' },
};

/** The team's labels on a message, as chips. */
export function TeamLabels({ labels }: { labels: InboxMessage['teamLabels'] }) {
  return labels.map((l) => (
    <span key={l.id} className={`team-label team-label-${l.color}`}>
      {l.name}
    </span>
  ));
}

/** How sure the classifier is, in words; the score itself is behind "Why Cadenza read it so". */
function sureness(confidence: number): string {
  return confidence >= 0.9 ? 'sure' : confidence >= 0.6 ? 'likely' : 'unsure';
}

/** The triage the conversation's toolbar offers; the screen carries each out (and its key). */
export interface TriageActions {
  done: () => void;
  unread: () => void;
  snooze: () => void;
  assign: () => void;
  label: () => void;
  /** The classifier's label, changed or confirmed by a person (…/reclassify). */
  relabel: (label: string) => void;
  relabelOptions: readonly string[];
}

/**
 * The conversation beside the list: the thread, oldest first (our steps and their replies,
 * GET …/inbox/messages/{id}: its newest 500; **Show earlier** loads the 500 before, from the
 * answer's earlierCursor), the opened reply's HTML in a sandboxed frame with its quoted history
 * folded (plain text: the new text, the rest folded), triage, internal notes and the reply box.
 */
export const InboxThread = forwardRef<HTMLHeadingElement, {
  workspaceId: string;
  message: InboxMessage;
  version: number;
  members: Member[];
  me: string | null;
  isAdmin: boolean;
  actions: TriageActions;
  onChanged: () => void;
  onBack: () => void;
}>(function InboxThread({ workspaceId, message: m, version, members, me, isAdmin, actions, onChanged, onBack }, headingRef) {
  const d = useLoad(() => api<InboxDetail>('GET', ws(workspaceId, `inbox/messages/${m.id}`)), [workspaceId, m.id, version]);
  const earlier = useEarlier(workspaceId, m.id, d.data?.earlierCursor ?? null);
  const act = m.action ? actionText[m.action] : undefined;
  const assignee = members.find((x) => x.id === m.assigneeId);
  return (
    <article className="conversation" aria-labelledby={`conv-${m.id}`}>
      <div className="row conversation-back">
        <button type="button" className="btn btn-quiet" onClick={onBack} aria-keyshortcuts="Escape">
          ← Back to the list
        </button>
      </div>
      <header className="conversation-head">
        <h2 id={`conv-${m.id}`} ref={headingRef} tabIndex={-1}>
          {m.subject ?? '(no subject)'}
        </h2>
        <div className="small">
          <span className="strong">{m.leadName ?? m.from}</span>
          {m.leadName && <span className="muted"> &lt;{m.from}&gt;</span>}
          {m.company && <span> · {m.company}</span>}
          <span className="muted">
            {' '}
            · to {m.mailboxEmail}
            {m.sequenceName ? ` · ${m.sequenceName}` : ''}
          </span>
        </div>
        <div className="row small">
          <Badge tone={labelTone(m.label)}>
            {words(m.label ?? 'unlabelled')}
            {m.confidence !== null ? ` · ${sureness(m.confidence)}` : ''}
          </Badge>
          {m.intent && <Badge tone="info">{words(m.intent)}</Badge>}
          {m.needsReview && <Badge tone="warn">needs review</Badge>}
          <TeamLabels labels={m.teamLabels} />
          {assignee && <Badge tone="info">assigned to {assignee.name ?? assignee.email}</Badge>}
          {m.snoozedUntil && <Badge tone="muted">snoozed until {when(m.snoozedUntil)}</Badge>}
          {act && m.enrollmentId && (
            <span data-testid="enrollment-state">
              <Badge tone={act.tone}>{act.text}</Badge>
            </span>
          )}
        </div>
        <div className="row conversation-actions" role="toolbar" aria-label="Triage">
          <button type="button" className="btn" onClick={actions.done} aria-keyshortcuts="e">
            {m.doneAt ? 'Back to inbox' : 'Done'}
          </button>
          <button type="button" className="btn" onClick={actions.unread} aria-keyshortcuts="u">
            Mark unread
          </button>
          <button type="button" className="btn" onClick={actions.snooze} aria-keyshortcuts="s">
            Snooze
          </button>
          <button type="button" className="btn" onClick={actions.assign} aria-keyshortcuts="a">
            Assign
          </button>
          <button type="button" className="btn" onClick={actions.label} aria-keyshortcuts="l">
            Label
          </button>
          <label className="small">
            <span>Classified as</span>{' '}
            <select value="" data-action="relabel" onChange={(e) => e.target.value && actions.relabel(e.target.value)} aria-label={`Relabel the message from ${m.from ?? 'unknown'}`}>
              <option value="">change…</option>
              {actions.relabelOptions
                .filter((l) => l !== m.label)
                .map((l) => (
                  <option key={l} value={l}>
                    {words(l)}
                  </option>
                ))}
            </select>
          </label>
          {m.needsReview && m.label && actions.relabelOptions.includes(m.label) && (
            <button type="button" className="btn btn-quiet" onClick={() => actions.relabel(m.label!)} aria-keyshortcuts="c">
              Confirm: {words(m.label)}
            </button>
          )}
        </div>
        {m.reason && (
          <details className="muted small">
            <summary>Why Cadenza read it so</summary>
            {m.confidence !== null && <div>Confidence {Math.round(m.confidence * 100)}%</div>}
            <code>{m.reason}</code>
          </details>
        )}
      </header>
      <ErrorNote error={d.error} />
      {!d.data && !d.error && <p className="muted small">Loading the conversation…</p>}
      {d.data && (
        <section className="thread" aria-label="Thread">
          {earlier.cursor && (
            <button type="button" className="btn btn-quiet" onClick={earlier.load} disabled={earlier.loading}>
              {earlier.loading ? 'Loading earlier messages…' : 'Show earlier messages'}
            </button>
          )}
          <ErrorNote error={earlier.error} />
          <ol className="thread-list">
            {[...earlier.entries, ...d.data.thread].map((t) => (
              <ThreadMessage key={t.id} workspaceId={workspaceId} t={t} opened={t.id === m.id} blockedImages={t.id === m.id ? (d.data?.html?.blockedImages ?? null) : null} />
            ))}
          </ol>
        </section>
      )}
      {m.mailboxId && <InboxReply workspaceId={workspaceId} message={m} onSent={onChanged} />}
      {d.data && <InboxNotes workspaceId={workspaceId} messageId={m.id} notes={d.data.notes} me={me} isAdmin={isAdmin} onChange={d.reload} />}
    </article>
  );
});

/**
 * The pages of a long thread before the one the conversation opened on, oldest first, loaded one
 * at a time on request; `cursor` is null once the first message is shown. Reset when another
 * message opens or the opened one is reloaded (a new first page answers its own cursor).
 */
function useEarlier(workspaceId: string, messageId: string, firstCursor: string | null) {
  const [entries, setEntries] = useState<ThreadEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(firstCursor);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    setEntries([]);
    setCursor(firstCursor);
    setError(undefined);
  }, [workspaceId, messageId, firstCursor]);
  const load = async () => {
    if (!cursor) return;
    setLoading(true);
    try {
      const r = await api<InboxDetail>('GET', ws(workspaceId, `inbox/messages/${messageId}?threadBefore=${encodeURIComponent(cursor)}`));
      setEntries((had) => [...r.thread, ...had]);
      setCursor(r.earlierCursor);
      setError(undefined);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setLoading(false);
    }
  };
  return { entries, cursor, loading, error, load };
}

/** One message of the thread: HTML in the sandboxed frame; plain text as its new part, the whole (with what it quotes) folded. */
function ThreadMessage({ workspaceId, t, opened, blockedImages }: { workspaceId: string; t: ThreadEntry; opened: boolean; blockedImages: number | null }) {
  const rest = t.newText && t.excerpt && t.excerpt.trim() !== t.newText.trim() ? t.excerpt : null;
  return (
    <li className={`thread-msg thread-${t.direction}${opened ? ' thread-opened' : ''}`}>
      <div className="inbox-head">
        <Badge tone={t.direction === 'outbound' ? 'info' : 'ok'}>{t.direction === 'outbound' ? 'Sent' : 'Received'}</Badge>
        <span className="strong">{t.from}</span>
        <span className="muted small inbox-when">{when(t.at)}</span>
      </div>
      <div className="inbox-subject">{t.subject ?? '(no subject)'}</div>
      {t.hasHtml && t.direction === 'inbound' ? (
        <InboxFrame workspaceId={workspaceId} messageId={t.id} title={`Message from ${t.from ?? 'unknown'}`} blockedImages={blockedImages} />
      ) : (
        <>
          {(t.newText ?? t.excerpt) && <p className="thread-text">{t.newText ?? t.excerpt}</p>}
          {rest && (
            <details className="small">
              <summary>Show the whole message, quoted history included</summary>
              <p className="thread-text muted">{rest}</p>
            </details>
          )}
        </>
      )}
    </li>
  );
}

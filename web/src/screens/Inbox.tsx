import { useRef, useState } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { ApiBody, InboxMessage } from '../types.ts';
import { Badge, Empty, ErrorNote, PageHeader, when } from '../ui/parts.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';
import { useScreenShortcuts, useShortcuts } from '../ui/shortcuts.tsx';
import { InboxReply } from './InboxReply.tsx';
import { InboxThread } from './InboxThread.tsx';

/** The labels a person may give (src/ingest/reclassify.ts PERSON_LABELS; every one the route takes, checked by the generated types). */
type Label = ApiBody<'POST /api/workspaces/:workspaceId/inbox/messages/:messageId/reclassify'>['label'];
const LABELS = ['human_reply', 'auto_reply', 'bounce', 'unsubscribe_request', 'auto_generated'] as const satisfies readonly Label[];
const isLabel = (l: string | null): l is Label => l !== null && (LABELS as readonly string[]).includes(l);
const labelTone = (l: string | null) => (l === 'human_reply' ? 'ok' : l === 'bounce' || l === 'unsubscribe_request' || l === 'feedback' ? 'bad' : l === 'auto_reply' ? 'warn' : 'muted');

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

/** The inbox without a mouse; listed by `?` (with the keys that work anywhere, Shell.tsx) and in docs/web.md. */
const SHORTCUTS = { title: 'Inbox', shortcuts: [
  { key: 'j', what: 'Next message' },
  { key: 'k', what: 'Previous message' },
  { key: 'Enter', what: 'Open or close the thread of the selected message' },
  { key: 'r', what: 'Reply to the selected message' },
  { key: 'Ctrl+Enter', what: 'In the reply box: send the reply (Escape closes the box)' },
  { key: 'l', what: 'Relabel the selected message (choose a label)' },
  { key: 'e', what: 'Confirm the label of a message waiting for review' },
] } as const;

/** How sure the classifier is, in words; the score itself is behind "Why Cadenza read it so". */
function sureness(confidence: number): string {
  return confidence >= 0.9 ? 'sure' : confidence >= 0.6 ? 'likely' : 'unsure';
}

export function Inbox({ workspaceId }: ScreenProps) {
  const [queue, setQueue] = useState<'all' | 'review'>('all');
  const list = useLoad(() => api<{ items: InboxMessage[] }>('GET', ws(workspaceId, `inbox?limit=100&folder=inbox${queue === 'review' ? '&needsReview=true' : ''}`)), [workspaceId, queue]);
  const review = useLoad(() => api<{ items: InboxMessage[]; nextCursor: string | null }>('GET', ws(workspaceId, 'inbox?limit=100&needsReview=true')), [workspaceId]);
  const reload = () => {
    list.reload();
    review.reload();
  };
  usePoll(list.reload, 5_000);
  const [error, setError] = useState<string>();
  const relabel = async (m: InboxMessage, label: Label) => {
    setError(undefined);
    try {
      await call('POST /api/workspaces/:workspaceId/inbox/messages/:messageId/reclassify', ws(workspaceId, `inbox/messages/${m.id}/reclassify`), { label });
      reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const messages = list.data?.items ?? [];
  // The selection follows a message, not a position: a refresh that brings new replies keeps it.
  const [selected, setSelected] = useState<string>();
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());
  const showHelp = useScreenShortcuts(SHORTCUTS);
  const listRef = useRef<HTMLUListElement>(null);
  const itemEl = (id: string) => listRef.current?.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(id)}"]`) ?? null;
  const toggle = (id: string) => setOpened((o) => (o.has(id) ? new Set([...o].filter((x) => x !== id)) : new Set([...o, id])));
  useShortcuts((key, e) => {
    const at = messages.findIndex((m) => m.id === selected);
    if (key === 'j' || key === 'k') {
      const next = messages[at < 0 ? 0 : Math.max(0, Math.min(messages.length - 1, at + (key === 'j' ? 1 : -1)))];
      if (!next) return false;
      setSelected(next.id);
      itemEl(next.id)?.focus();
      return true;
    }
    const m = messages[at];
    if (!m) return false;
    const el = itemEl(m.id);
    switch (key) {
      case 'Enter':
        // Enter on a button or link inside the message keeps its own meaning.
        if (e.target !== el) return false;
        toggle(m.id);
        return true;
      case 'r':
        el?.querySelector<HTMLButtonElement>('[data-action="reply"]')?.click();
        el?.querySelector<HTMLTextAreaElement>('textarea')?.focus();
        return true;
      case 'l':
        el?.querySelector<HTMLSelectElement>('[data-action="relabel"]')?.focus();
        return true;
      case 'e':
        if (!m.needsReview || !isLabel(m.label)) return false;
        void relabel(m, m.label);
        return true;
    }
    return false;
  });
  const reviewCount = review.data ? `${review.data.items.length}${review.data.nextCursor ? '+' : ''}` : '';
  return (
    <>
      <PageHeader title="Inbox">
        <button type="button" className="btn btn-quiet" onClick={showHelp} aria-keyshortcuts="?">
          Keyboard shortcuts
        </button>
        <div className="tabs" role="tablist" aria-label="Queue">
          <button type="button" role="tab" aria-selected={queue === 'all'} className="tab" onClick={() => setQueue('all')}>
            All replies
          </button>
          <button type="button" role="tab" aria-selected={queue === 'review'} className="tab" onClick={() => setQueue('review')}>
            Needs review{reviewCount ? ` (${reviewCount})` : ''}
          </button>
        </div>
      </PageHeader>
      <ErrorNote error={list.error ?? error} />
      {!list.loading && messages.length === 0 && <Empty>{queue === 'review' ? 'Nothing to review.' : 'No replies yet. They appear here within seconds of arriving in any mailbox.'}</Empty>}
      <ul className="inbox" aria-label="Messages" ref={listRef}>
        {messages.map((m) => {
          const act = m.action ? actionText[m.action] : undefined;
          const isOpen = opened.has(m.id);
          return (
            <li
              key={m.id}
              className="card inbox-item"
              data-message-id={m.id}
              tabIndex={-1}
              aria-current={selected === m.id ? 'true' : undefined}
              aria-label={`${m.from ?? 'Unknown sender'}: ${m.subject ?? '(no subject)'}`}
              onFocus={() => setSelected(m.id)}
            >
              <div className="inbox-head">
                <span className="strong">{m.from}</span>
                <span className="muted small">to {m.mailboxEmail}</span>
                <span className="muted small inbox-when">{when(m.at)}</span>
              </div>
              <div className="inbox-subject">{m.subject}</div>
              {m.excerpt && <p className="inbox-excerpt">{m.excerpt}</p>}
              <div className="row">
                <Badge tone={labelTone(m.label)}>
                  {(m.label ?? 'unlabelled').replace(/_/g, ' ')}
                  {m.confidence !== null ? ` · ${sureness(m.confidence)}` : ''}
                </Badge>
                {m.intent && <Badge tone="info">{m.intent.replace(/_/g, ' ')}</Badge>}
                {m.needsReview && <Badge tone="warn">needs review</Badge>}
                {act && m.enrollmentId && (
                  <span className="small" data-testid="enrollment-state">
                    <Badge tone={act.tone}>{act.text}</Badge>
                  </span>
                )}
                <label className="inbox-relabel small">
                  <span>Relabel</span>{' '}
                  <select value="" data-action="relabel" onChange={(e) => isLabel(e.target.value) && void relabel(m, e.target.value)} aria-label={`Relabel the message from ${m.from ?? 'unknown'}`}>
                    <option value="">choose…</option>
                    {LABELS.filter((l) => l !== m.label).map((l) => (
                      <option key={l} value={l}>
                        {l.replace(/_/g, ' ')}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
              {m.reason && (
                <details className="muted small">
                  <summary>Why Cadenza read it so</summary>
                  {m.confidence !== null && <div>Confidence {Math.round(m.confidence * 100)}%</div>}
                  <code>{m.reason}</code>
                </details>
              )}
              <div className="row">
                <button type="button" className="btn btn-quiet" aria-expanded={isOpen} aria-controls={`thread-${m.id}`} onClick={() => toggle(m.id)}>
                  {isOpen ? 'Close thread' : 'Open thread'}
                </button>
                {m.needsReview && isLabel(m.label) && (
                  <button type="button" className="btn btn-quiet" onClick={() => void relabel(m, m.label as Label)} aria-keyshortcuts="e">
                    Confirm: {m.label.replace(/_/g, ' ')}
                  </button>
                )}
              </div>
              {isOpen && <InboxThread workspaceId={workspaceId} messageId={m.id} id={`thread-${m.id}`} />}
              {m.mailboxId && <InboxReply workspaceId={workspaceId} message={m} onSent={reload} />}
            </li>
          );
        })}
      </ul>
    </>
  );
}

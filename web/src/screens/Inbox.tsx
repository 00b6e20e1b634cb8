import { useState } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { InboxMessage } from '../types.ts';
import { Badge, Empty, ErrorNote, PageHeader, when } from '../ui/parts.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';
import { InboxReply } from './InboxReply.tsx';

/** The labels a person may give (src/ingest/reclassify.ts PERSON_LABELS). */
const LABELS = ['human_reply', 'auto_reply', 'bounce', 'unsubscribe_request', 'auto_generated'] as const;
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
  const relabel = async (m: InboxMessage, label: string) => {
    setError(undefined);
    try {
      await api('POST', ws(workspaceId, `inbox/messages/${m.id}/reclassify`), { label });
      reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const messages = list.data?.items ?? [];
  const reviewCount = review.data ? `${review.data.items.length}${review.data.nextCursor ? '+' : ''}` : '';
  return (
    <>
      <PageHeader title="Inbox">
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
      <ul className="inbox" aria-label="Messages">
        {messages.map((m) => {
          const act = m.action ? actionText[m.action] : undefined;
          return (
            <li key={m.id} className="card inbox-item">
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
                  {m.confidence !== null ? ` · ${Math.round(m.confidence * 100)}%` : ''}
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
                  <select value="" onChange={(e) => e.target.value && void relabel(m, e.target.value)} aria-label={`Relabel the message from ${m.from ?? 'unknown'}`}>
                    <option value="">choose…</option>
                    {LABELS.filter((l) => l !== m.label).map((l) => (
                      <option key={l} value={l}>
                        {l.replace(/_/g, ' ')}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
              {m.reason && <div className="muted small">Why: {m.reason}</div>}
              {m.mailboxId && <InboxReply workspaceId={workspaceId} message={m} onSent={reload} />}
            </li>
          );
        })}
      </ul>
    </>
  );
}

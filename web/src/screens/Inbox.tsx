import { useState } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { InboxMessage } from '../types.ts';
import { Badge, Empty, ErrorNote, PageHeader, when } from '../ui/parts.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';

/** src/ingest/types.ts MailLabel. */
const LABELS = ['human_reply', 'auto_reply', 'auto_generated', 'bounce', 'delivery_report', 'feedback', 'unsubscribe_request', 'challenge'] as const;
const labelTone = (l: string | null) => (l === 'human_reply' ? 'ok' : l === 'bounce' || l === 'unsubscribe_request' || l === 'feedback' ? 'bad' : l === 'auto_reply' ? 'warn' : 'muted');
const stateTone = (s: string) => (s === 'active' ? 'info' : s === 'replied' || s === 'finished' ? 'ok' : s === 'paused' ? 'warn' : 'muted');

export function Inbox({ workspaceId }: ScreenProps) {
  const [queue, setQueue] = useState<'all' | 'review'>('all');
  const list = useLoad(() => api<{ messages: InboxMessage[]; reviewCount: number }>('GET', ws(workspaceId, `inbox?queue=${queue}&limit=100`)), [workspaceId, queue]);
  usePoll(list.reload, 5_000);
  const [error, setError] = useState<string>();
  const relabel = async (m: InboxMessage, label: string) => {
    setError(undefined);
    try {
      await api('POST', ws(workspaceId, `inbox/${m.id}/label`), { label });
      list.reload();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const messages = list.data?.messages ?? [];
  return (
    <>
      <PageHeader title="Inbox">
        <div className="tabs" role="tablist" aria-label="Queue">
          <button type="button" role="tab" aria-selected={queue === 'all'} className="tab" onClick={() => setQueue('all')}>
            All replies
          </button>
          <button type="button" role="tab" aria-selected={queue === 'review'} className="tab" onClick={() => setQueue('review')}>
            Needs review{list.data ? ` (${list.data.reviewCount})` : ''}
          </button>
        </div>
      </PageHeader>
      <ErrorNote error={list.error ?? error} />
      {!list.loading && messages.length === 0 && <Empty>{queue === 'review' ? 'Nothing to review.' : 'No replies yet. They appear here within seconds of arriving in any mailbox.'}</Empty>}
      <ul className="inbox" aria-label="Messages">
        {messages.map((m) => (
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
              {m.enrollment && (
                <span className="small" data-testid="enrollment-state">
                  {m.enrollment.sequenceName}: <Badge tone={stateTone(m.enrollment.state)}>{m.enrollment.state}</Badge>
                  {m.enrollment.reason ? <span className="muted"> ({m.enrollment.reason})</span> : null}
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
          </li>
        ))}
      </ul>
    </>
  );
}

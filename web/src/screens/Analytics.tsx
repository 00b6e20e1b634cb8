import { api, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { Analytics as Data, MailboxFigures } from '../types.ts';
import { Badge, duration, ErrorNote, PageHeader } from '../ui/parts.tsx';
import { DailyChart } from '../ui/charts.tsx';
import { useLoad } from '../ui/use-load.ts';

const SERIES = [
  { key: 'sends', label: 'Sends', color: 'var(--c-primary)' },
  { key: 'replies', label: 'Replies', color: 'var(--c-ok)' },
  { key: 'bounces', label: 'Bounces', color: 'var(--c-bad)' },
  { key: 'unsubscribes', label: 'Unsubscribes', color: 'var(--c-warn)' },
] as const;

const healthTone = (h: string) => (h === 'ok' ? 'ok' : h === 'warning' ? 'warn' : 'bad');

/** Sent, replied and reply rate per row: the per-step funnel and the per-variant comparison. */
function ReplyRateTable({ label, empty, rows }: { label: string; empty: string; rows: Array<{ key: string; label: string; sent: number; replied: number }> }) {
  if (rows.length === 0) return <p className="muted">{empty}</p>;
  return (
    <table className="table table-compact">
      <thead>
        <tr>
          <th scope="col">{label}</th>
          <th scope="col">Sent</th>
          <th scope="col">Replied</th>
          <th scope="col">Reply rate</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}>
            <td>{r.label}</td>
            <td>{r.sent}</td>
            <td>{r.replied}</td>
            <td>{r.sent ? `${((r.replied / r.sent) * 100).toFixed(1)}%` : '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}


/** The call outcomes in the order a sales lead reads them. */
const CALL_OUTCOME_ROWS = [
  ['connected', 'Connected'],
  ['meeting_booked', 'Meeting booked'],
  ['voicemail', 'Voicemail'],
  ['no_answer', 'No answer'],
  ['busy', 'Busy'],
  ['not_interested', 'Not interested'],
  ['wrong_number', 'Wrong number'],
  ['dropped', 'Dropped'],
  ['unlogged', 'No outcome yet'],
] as const;
export function Analytics({ workspaceId }: ScreenProps) {
  const a = useLoad(() => api<Data>('GET', ws(workspaceId, 'analytics?days=30')), [workspaceId]);
  const boxes = useLoad(() => api<{ mailboxes: MailboxFigures[] }>('GET', ws(workspaceId, 'analytics/mailboxes?days=30')), [workspaceId]);
  const d = a.data;
  // The window ends with the latest work: after a demo, whose clock ran ahead of the real date, it says so.
  const asOf = d ? new Date(d.asOf) : null;
  const ahead = asOf !== null && asOf.getTime() > Date.now() + 60_000;
  const period = asOf ? `30 days to ${asOf.toLocaleDateString(undefined, { month: 'short', day: 'numeric', year: 'numeric' })}` : '30 days';
  return (
    <>
      <PageHeader title="Analytics" />
      <ErrorNote error={a.error ?? boxes.error} />
      {d && (
        <div className="stack">
          <p className="muted small" data-testid="analytics-period">
            Every figure on this page covers the {period}{ahead ? ' (a demo ran its clock ahead of today)' : ''}: a send is an email step sent, and each
            reply counts once, for the last email sent before it.
          </p>
          <section className="kpis" aria-label={period}>
            {SERIES.map((s) => (
              <div key={s.key} className="card kpi">
                <div className="kpi-value" data-testid={`kpi-${s.key}`}>{d.totals[s.key]}</div>
                <div className="muted small">{s.label}, 30 days</div>
              </div>
            ))}
          </section>
          <section className="card">
            <h2>Per day</h2>
            <DailyChart days={d.days} series={SERIES} />
          </section>
          <div className="grid-2">
            <section className="card">
              <h2>Per-step funnel</h2>
              <ReplyRateTable
                label="Sequence / step"
                empty="No sends yet."
                rows={d.funnel.map((f) => ({ key: `${f.sequenceName}/${f.stepKey}`, label: `${f.sequenceName} / ${f.stepKey}${f.removed ? ' (removed step)' : ''}`, sent: f.sent, replied: f.replied }))}
              />
              {d.unattributedReplies > 0 && <p className="muted small">{d.unattributedReplies} replies came before any email was sent and are not in this table.</p>}
            </section>
            <section className="card">
              <h2>Reply rate per variant</h2>
              <ReplyRateTable
                label="Sequence / step / variant"
                empty="No step has more than one variant."
                rows={d.variants.map((v) => ({
                  key: `${v.sequenceName}/${v.stepKey}/${v.variantKey}`,
                  label: `${v.sequenceName} / ${v.stepKey} / ${v.variantKey.toUpperCase()}`,
                  sent: v.sent,
                  replied: v.replied,
                }))}
              />
            </section>
            {boxes.data && (
              <section className="card">
                <h2>Per mailbox, 30 days</h2>
                {boxes.data.mailboxes.length === 0 ? (
                  <p className="muted">No mailbox yet.</p>
                ) : (
                  <table className="table table-compact">
                    <thead>
                      <tr>
                        <th scope="col">Mailbox</th>
                        <th scope="col">Health</th>
                        <th scope="col">Sent</th>
                        <th scope="col">Replies</th>
                        <th scope="col">Bounces (hard / soft)</th>
                      </tr>
                    </thead>
                    <tbody>
                      {boxes.data.mailboxes.map((m) => (
                        <tr key={m.id}>
                          <td>{m.email}</td>
                          <td>
                            <Badge tone={healthTone(m.health)}>{m.health}</Badge>
                            {m.healthReason && <div className="muted small">{m.healthReason}</div>}
                          </td>
                          <td>{m.sent}</td>
                          <td>{m.replies}</td>
                          <td>
                            {m.hardBounces} / {m.softBounces}
                            {m.bounceRate !== null && <div className="muted small">{(m.bounceRate * 100).toFixed(1)}% hard</div>}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
              </section>
            )}
            {d.calls.calls > 0 && (
              <section className="card">
                <h2>Calls</h2>
                <p className="muted small">
                  {d.calls.calls} calls begun in the period, {d.calls.answered} answered, {duration(d.calls.talkMs)} talking.
                </p>
                <table className="table" data-testid="call-outcomes">
                  <caption className="sr-only">Calls by outcome</caption>
                  <thead>
                    <tr>
                      <th scope="col">Outcome</th>
                      <th scope="col">Calls</th>
                    </tr>
                  </thead>
                  <tbody>
                    {CALL_OUTCOME_ROWS.filter(([k]) => d.calls.outcomes[k] > 0).map(([k, label]) => (
                      <tr key={k}>
                        <td>{label}</td>
                        <td>{d.calls.outcomes[k]}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </section>
            )}
            <section className="card">
              <h2>Reply to stop</h2>
              <p className="muted small">
                How long after a prospect&rsquo;s mail (a reply, a bounce, an unsubscribe, an out-of-office note) reached the mailbox its sequence stopped or paused, in
                real time ({d.replyToStop.count} messages): half within the first figure, nine in ten within the second, 99 in 100 within the third.
              </p>
              <dl className="pcts" data-testid="reply-to-stop">
                <dt>Half</dt>
                <dd>{duration(d.replyToStop.p50Ms)}</dd>
                <dt>9 in 10</dt>
                <dd>{duration(d.replyToStop.p90Ms)}</dd>
                <dt>99 in 100</dt>
                <dd>{duration(d.replyToStop.p99Ms)}</dd>
              </dl>
            </section>
          </div>
        </div>
      )}
    </>
  );
}

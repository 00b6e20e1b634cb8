import { useState } from 'react';
import { api, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { Analytics as Data, MailboxFigures, SequenceSummary } from '../types.ts';
import { Badge, duration, ErrorNote, PageHeader } from '../ui/parts.tsx';
import { DailyChart } from '../ui/charts.tsx';
import { CsvButton } from '../ui/CsvButton.tsx';
import { BreakdownTable } from './AnalyticsBreakdown.tsx';
import { AnalyticsCharts } from './AnalyticsCharts.tsx';
import { WeeklyReportForm } from './WeeklyReportForm.tsx';
import { useLoad } from '../ui/use-load.ts';

/** What reached the prospects, per day. */
const DELIVERY = [
  { key: 'sends', label: 'Sends', color: 'var(--c-primary)' },
  { key: 'bounces', label: 'Bounces', color: 'var(--c-bad)' },
  { key: 'unsubscribes', label: 'Unsubscribes', color: 'var(--c-warn)' },
] as const;

/** What the prospects did, per day: opens by a person apart from those an image proxy made. */
const ENGAGEMENT = [
  { key: 'opened', label: 'Opened by a person', color: '#6b46c1' },
  { key: 'openedAutomatically', label: 'Opened automatically', color: '#a0aec0' },
  { key: 'clicked', label: 'Clicked', color: '#dd6b20' },
  { key: 'replies', label: 'Replies', color: 'var(--c-ok)' },
  { key: 'positiveReplies', label: 'Interested replies', color: '#2c7a7b' },
  { key: 'meetings', label: 'Meetings', color: '#b7791f' },
] as const;

/** The headline cards, in the order a sales lead reads them; `hint` says what is counted. */
const KPIS = [
  { key: 'sends', label: 'Sends', hint: 'email steps sent' },
  { key: 'opened', label: 'Opened', hint: 'emails opened by a person (image proxies apart)' },
  { key: 'clicked', label: 'Clicked', hint: 'emails with a link followed by a person' },
  { key: 'replies', label: 'Replies', hint: 'prospects who replied' },
  { key: 'positiveReplies', label: 'Interested', hint: 'prospects whose reply reads as interested' },
  { key: 'meetings', label: 'Meetings', hint: 'meetings booked' },
  { key: 'bounces', label: 'Bounces', hint: 'hard and soft', lowerIsBetter: true },
  { key: 'unsubscribes', label: 'Unsubscribes', hint: 'opt-outs', lowerIsBetter: true },
] as const;

const PERIODS = [7, 30, 90] as const;

/** The browser's own time zone: the figures are counted in the calendar of whoever reads them unless they choose. */
const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** Every zone the browser knows (the server refuses one PostgreSQL does not), the reader's first. */
function allZones(chosen: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return [...new Set([browserZone(), 'UTC', chosen, ...known])];
}

/** The change from the previous period in words, and whether it went up. */
function change(now: number, before: number, days: number): { text: string; tone: 'up' | 'down' | 'same' } {
  if (before === 0) return now === 0 ? { text: 'none in either period', tone: 'same' } : { text: `none in the ${days} days before`, tone: 'up' };
  const pct = Math.round(((now - before) / before) * 100);
  const vs = ` vs ${before.toLocaleString()} before`;
  return pct === 0 ? { text: `no change${vs}`, tone: 'same' } : { text: `${pct > 0 ? '+' : '−'}${Math.abs(pct)}%${vs}`, tone: pct > 0 ? 'up' : 'down' };
}

const healthTone = (h: string) => (h === 'ok' ? 'ok' : h === 'warning' ? 'warn' : 'bad');

/** Sent, replied and reply rate per row: the per-step funnel and the per-variant comparison. */
function ReplyRateTable({ label, empty, rows, what, csvName }: { label: string; empty: string; rows: Array<{ key: string; label: string; sent: number; replied: number }>; what: string; csvName: string }) {
  if (rows.length === 0) return <p className="muted">{empty}</p>;
  return (
    <>
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
    <CsvButton what={what} filename={`${csvName}.csv`} header={[label, 'Sent', 'Replied', 'Reply rate (share)']} rows={rows.map((r) => [r.label, r.sent, r.replied, r.sent ? r.replied / r.sent : null])} />
    </>
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
export function Analytics({ workspaceId, readOnly }: ScreenProps & { readOnly?: boolean }) {
  const [days, setDays] = useState<(typeof PERIODS)[number]>(30);
  const [zone, setZone] = useState(browserZone);
  const [sequenceId, setSequenceId] = useState('');
  const query = `days=${days}&zone=${encodeURIComponent(zone)}${sequenceId ? `&sequenceId=${sequenceId}` : ''}`;
  const sequences = useLoad(() => api<{ sequences: SequenceSummary[] }>('GET', ws(workspaceId, 'sequences')), [workspaceId]);
  const a = useLoad(() => api<Data>('GET', ws(workspaceId, `analytics?${query}`)), [workspaceId, query]);
  const boxes = useLoad(() => api<{ mailboxes: MailboxFigures[] }>('GET', ws(workspaceId, `analytics/mailboxes?days=${Math.min(days, 90)}&zone=${encodeURIComponent(zone)}`)), [workspaceId, query]);
  const d = a.data;
  // The window ends with the latest work: after a demo, whose clock ran ahead of the real date, it says so.
  const asOf = d ? new Date(d.asOf) : null;
  const ahead = asOf !== null && asOf.getTime() > Date.now() + 60_000;
  const lastDay = d?.days.at(-1)?.day;
  const period = lastDay ? `${days} days to ${new Date(`${lastDay}T12:00:00Z`).toLocaleDateString(undefined, { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' })}` : `${days} days`;
  const zones = allZones(zone);
  return (
    <>
      <PageHeader title="Analytics" />
      <div className="toolbar" role="group" aria-label="Period and time zone">
        <label>
          Period{' '}
          <select value={days} onChange={(e) => setDays(Number(e.target.value) as (typeof PERIODS)[number])} data-testid="analytics-days">
            {PERIODS.map((p) => (
              <option key={p} value={p}>
                Last {p} days
              </option>
            ))}
          </select>
        </label>
        <label>
          Sequence{' '}
          <select value={sequenceId} onChange={(e) => setSequenceId(e.target.value)} data-testid="analytics-sequence">
            <option value="">All sequences</option>
            {(sequences.data?.sequences ?? []).map((q) => (
              <option key={q.id} value={q.id}>
                {q.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Days counted in{' '}
          <select value={zone} onChange={(e) => setZone(e.target.value)} data-testid="analytics-zone">
            {zones.map((z) => (
              <option key={z} value={z}>
                {z === browserZone() ? `${z} (yours)` : z}
              </option>
            ))}
          </select>
        </label>
        <a className="btn btn-quiet" href={ws(workspaceId, `analytics/days.csv?${query}`)} download data-testid="analytics-csv">
          Download the days as CSV
        </a>
      </div>
      <ErrorNote error={a.error ?? boxes.error} />
      {d && (
        <div className="stack">
          <p className="muted small" data-testid="analytics-period">
            Every figure on this page covers the {period}{ahead ? ' (a demo ran its clock ahead of today)' : ''}, each day midnight to midnight in {d.zone}, and is
            compared with the {days} days before. A send is an email step sent; each reply counts once, for the last email sent before it; an email counts as opened
            when a person opened it, not when an image proxy fetched it (those are shown apart).
          </p>
          <section className="kpis" aria-label={period}>
            {KPIS.map((k) => {
              const c = change(d.totals[k.key], d.previous.totals[k.key], days);
              // Fewer bounces is better news, more replies too: the colour says which.
              const tone = c.tone === 'same' ? '' : (c.tone === 'up') !== ('lowerIsBetter' in k) ? 'kpi-better' : 'kpi-worse';
              return (
                <div key={k.key} className="card kpi" title={k.hint}>
                  <div className="kpi-value" data-testid={`kpi-${k.key}`}>{d.totals[k.key].toLocaleString()}</div>
                  <div className="muted small">{k.label}</div>
                  <div className={`small kpi-change ${tone}`} data-testid={`kpi-change-${k.key}`}>
                    {c.text}
                  </div>
                </div>
              );
            })}
          </section>
          <div className="grid-2">
            <section className="card">
              <h2>Sent per day</h2>
              <DailyChart days={d.days} series={DELIVERY} csvName="sent-per-day" />
            </section>
            <section className="card">
              <h2>What prospects did, per day</h2>
              <DailyChart days={d.days} series={ENGAGEMENT} csvName="prospects-per-day" />
            </section>
          </div>
          <AnalyticsCharts workspaceId={workspaceId} query={query} days={days} />
          <BreakdownTable workspaceId={workspaceId} query={query} />
          <div className="grid-2">
            <section className="card">
              <h2>Per-step funnel</h2>
              <ReplyRateTable
                label="Sequence / step"
                empty="No sends yet."
                what="the per-step funnel"
                csvName="per-step"
                rows={d.funnel.map((f) => ({ key: `${f.sequenceName}/${f.stepKey}`, label: `${f.sequenceName} / ${f.stepKey}${f.removed ? ' (removed step)' : ''}`, sent: f.sent, replied: f.replied }))}
              />
              {d.unattributedReplies > 0 && <p className="muted small">{d.unattributedReplies} replies came before any email was sent and are not in this table.</p>}
            </section>
            <section className="card">
              <h2>Reply rate per variant</h2>
              <ReplyRateTable
                label="Sequence / step / variant"
                what="the reply rate per variant"
                csvName="per-variant"
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
                <h2>Per mailbox, {Math.min(days, 90)} days{sequenceId ? " (every sequence)" : ""}</h2>
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
                {boxes.data.mailboxes.length > 0 && (
                  <CsvButton
                    what="the per-mailbox table"
                    filename="per-mailbox.csv"
                    header={['Mailbox', 'Health', 'Why', 'Sent', 'Replies', 'Hard bounces', 'Soft bounces', 'Hard bounce rate (share)']}
                    rows={boxes.data.mailboxes.map((m) => [m.email, m.health, m.healthReason, m.sent, m.replies, m.hardBounces, m.softBounces, m.bounceRate])}
                  />
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
                <CsvButton what="the calls by outcome" filename="calls.csv" header={['Outcome', 'Calls']} rows={CALL_OUTCOME_ROWS.filter(([k]) => d.calls.outcomes[k] > 0).map(([k, label]) => [label, d.calls.outcomes[k]])} />
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
              <CsvButton
                what="the reply-to-stop figures"
                filename="reply-to-stop.csv"
                header={['Messages', 'Half within (ms)', '9 in 10 within (ms)', '99 in 100 within (ms)']}
                rows={[[d.replyToStop.count, d.replyToStop.p50Ms, d.replyToStop.p90Ms, d.replyToStop.p99Ms]]}
              />
            </section>
          </div>
          {!readOnly && <WeeklyReportForm workspaceId={workspaceId} />}
        </div>
      )}
    </>
  );
}

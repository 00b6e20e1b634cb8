import { useState } from 'react';
import { api, ws } from '../api.ts';
import type { AnalyticsFunnel, AnalyticsMailboxDays, AnalyticsReplyTimes, AnalyticsSendHours } from '../types.ts';
import { BarChart } from '../ui/charts.tsx';
import { CsvButton } from '../ui/CsvButton.tsx';
import { duration, ErrorNote } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)}%`);
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
/** The funnel's stages in a word each, under the bars (the list beside the chart says them in full). */
const STAGE_WORD: Record<string, string> = { sent: 'Sent', delivered: 'Delivered', opened: 'Opened', clicked: 'Clicked', replied: 'Replied', positive: 'Interested', meetings: 'Meetings' };

/**
 * The charts people look at rather than read (issue 18), for the screen's period, zone and
 * sequence: the funnel, reply time after send, the best send hours in the prospect's time, and each
 * mailbox's health per day. Each is one GET …/analytics/<chart> (docs/api.md "Analytics").
 */
export function AnalyticsCharts({ workspaceId, query, days }: { workspaceId: string; query: string; days: number }) {
  // Reply times, send hours and mailbox days cover at most 90 days (the journal itself, or its quarter hours).
  const shortQuery = query.replace(/days=\d+/, `days=${Math.min(days, 90)}`);
  const funnel = useLoad(() => api<AnalyticsFunnel>('GET', ws(workspaceId, `analytics/funnel?${query}`)), [workspaceId, query]);
  const times = useLoad(() => api<AnalyticsReplyTimes>('GET', ws(workspaceId, `analytics/reply-times?${shortQuery}`)), [workspaceId, shortQuery]);
  const hours = useLoad(() => api<AnalyticsSendHours>('GET', ws(workspaceId, `analytics/send-hours?${shortQuery}`)), [workspaceId, shortQuery]);
  return (
    <>
      <ErrorNote error={funnel.error ?? times.error ?? hours.error} />
      <div className="grid-2">
        {funnel.data && (
          <section className="card" data-testid="funnel-card">
            <h2>Funnel</h2>
            <p className="muted small">
              Each stage counted in the period by when it happened (a reply to an email sent before the period counts), so a stage can outgrow the one before. Delivered is
              sent less bounced.
            </p>
            <BarChart title="Stage" testId="funnel-chart" csvName="funnel" categories={funnel.data.stages.map((s) => STAGE_WORD[s.key] ?? s.label)} series={[{ label: 'Count', color: 'var(--c-primary)', values: funnel.data.stages.map((s) => s.count) }]} />
            <ol className="funnel-steps" data-testid="funnel-steps">
              {funnel.data.stages.map((s) => (
                <li key={s.key}>
                  <strong>{s.label}</strong> {s.count.toLocaleString()}
                  {s.conversion !== null && <span className="muted small"> · {pct(s.conversion)} of the stage before</span>}
                </li>
              ))}
            </ol>
          </section>
        )}
        {times.data && (
          <section className="card" data-testid="reply-times-card">
            <h2>Reply time after send</h2>
            <p className="muted small" data-testid="reply-times-summary">
              {times.data.count === 0
                ? 'No reply in the period came after an email.'
                : `${times.data.count} replies; half came within ${duration(times.data.medianMs)} of the email they answered.`}
              {times.data.noEmailBefore > 0 && ` ${times.data.noEmailBefore} came before any email and are not shown.`}
            </p>
            <BarChart title="Time to reply" testId="reply-times-chart" csvName="reply-times" categories={times.data.buckets.map((b) => b.label)} series={[{ label: 'Replies', color: 'var(--c-ok)', values: times.data.buckets.map((b) => b.count) }]} />
          </section>
        )}
      </div>
      {hours.data && <SendHours data={hours.data} days={Math.min(days, 90)} />}
      <MailboxHealth workspaceId={workspaceId} query={shortQuery} days={Math.min(days, 90)} />
    </>
  );
}

/** Sends and reply rate by the prospect's hour, the best hours in words, and a weekday grid on request. */
function SendHours({ data, days }: { data: AnalyticsSendHours; days: number }) {
  const [byWeekday, setByWeekday] = useState(false);
  const cell = (weekday: number, hour: number) => data.cells.find((c) => c.weekday === weekday && c.hour === hour);
  const top = Math.max(1, ...data.cells.map((c) => (c.sends > 0 ? c.replies / c.sends : 0)));
  return (
    <section className="card" data-testid="send-hours-card">
      <h2>Best send hours, in the prospect&rsquo;s time</h2>
      <p className="muted small">
        The hour of day where the prospect is (the lead&rsquo;s time zone, else the workspace&rsquo;s) when each email went out, over the last {days} days: sends, and the
        share that got a reply.
      </p>
      <p data-testid="best-hours">{data.best.text}</p>
      <BarChart
        title="Hour"
        testId="send-hours-chart"
        csvName="send-hours"
        categories={data.hours.map((h) => String(h.hour))}
        series={[
          { label: 'Sends', color: 'var(--c-primary)', values: data.hours.map((h) => h.sends) },
          { label: 'Reply rate', color: 'var(--c-ok)', kind: 'share', values: data.hours.map((h) => h.replyRate) },
        ]}
      />
      <label className="inline-check">
        <input type="checkbox" checked={byWeekday} onChange={(e) => setByWeekday(e.target.checked)} data-testid="send-hours-weekday" /> Show by weekday
      </label>
      {byWeekday && (
        // Scrolls sideways on a phone: focusable, so a keyboard can scroll it too (axe: scrollable-region-focusable).
        <div className="heat-scroll" tabIndex={0} role="region" aria-label="Sends and reply rate by weekday and hour">
          <table className="heat" data-testid="send-hours-heat">
            <caption className="sr-only">Reply rate and sends by weekday and hour, in the prospect&rsquo;s time</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {data.hours.map((h) => (
                  <th key={h.hour} scope="col">
                    {h.hour}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {WEEKDAYS.map((name, i) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  {data.hours.map((h) => {
                    const c = cell(i + 1, h.hour);
                    const rate = c && c.sends > 0 ? c.replies / c.sends : null;
                    // Shaded by reply rate against the best cell; an hour with no send stays blank.
                    return (
                      <td key={h.hour} title={c ? `${c.sends} sends, ${pct(rate)} replied` : 'no sends'} style={rate !== null ? { background: `color-mix(in srgb, var(--c-ok) ${Math.round((rate / top) * 70)}%, transparent)` } : undefined}>
                        {c?.sends ? c.sends : ''}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted small">Each cell shows the sends; the deeper the colour, the higher its reply rate.</p>
          <CsvButton
            what="sends by weekday and hour"
            filename="send-hours-by-weekday.csv"
            header={['Weekday', 'Hour', 'Sends', 'Replies', 'Reply rate (share)']}
            rows={data.cells.map((c) => [WEEKDAYS[c.weekday - 1], c.hour, c.sends, c.replies, c.sends > 0 ? c.replies / c.sends : null])}
          />
        </div>
      )}
    </section>
  );
}

/** One mailbox's (or every mailbox's) sends, bounce rate and warmup placement per day. */
function MailboxHealth({ workspaceId, query, days }: { workspaceId: string; query: string; days: number }) {
  const [mailboxId, setMailboxId] = useState('');
  // The mailbox-days route has no sequence: mailbox health is every sequence's.
  const q = `${query.replace(/&sequenceId=[^&]*/, '')}${mailboxId ? `&mailboxId=${mailboxId}` : ''}`;
  const all = useLoad(() => api<AnalyticsMailboxDays>('GET', ws(workspaceId, `analytics/mailbox-days?${query.replace(/&sequenceId=[^&]*/, '')}`)), [workspaceId, query]);
  const m = useLoad(() => api<AnalyticsMailboxDays>('GET', ws(workspaceId, `analytics/mailbox-days?${q}`)), [workspaceId, q]);
  if (!m.data || !all.data) return <ErrorNote error={m.error ?? all.error} />;
  const dayKeys = m.data.mailboxes[0]?.days.map((d) => d.day) ?? [];
  const sum = (i: number, k: 'sends' | 'bounces' | 'inbox' | 'junk') => m.data!.mailboxes.reduce((n, b) => n + b.days[i]![k], 0);
  const perDay = dayKeys.map((day, i) => ({ day, sends: sum(i, 'sends'), bounces: sum(i, 'bounces'), inbox: sum(i, 'inbox'), junk: sum(i, 'junk') }));
  const placed = perDay.reduce((n, d) => n + d.inbox + d.junk, 0);
  return (
    <section className="card" data-testid="mailbox-health-card">
      <h2>Mailbox health per day</h2>
      <label>
        Mailbox{' '}
        <select value={mailboxId} onChange={(e) => setMailboxId(e.target.value)} data-testid="mailbox-health-pick">
          <option value="">Every mailbox</option>
          {all.data.mailboxes.map((b) => (
            <option key={b.id} value={b.id}>
              {b.email}
            </option>
          ))}
        </select>
      </label>
      <p className="muted small" data-testid="placement-note">
        Sends and bounce rate over the last {days} days;{' '}
        {placed > 0
          ? `inbox placement is the share of this warmup mail its receivers found in the inbox rather than junk (${placed} placed).`
          : 'no warmup mail was placed in this period, so there is no inbox placement to show (it comes from the warmup network).'}
      </p>
      <BarChart
        title="Day"
        testId="mailbox-health-chart"
        csvName="mailbox-health"
        categories={perDay.map((d) => d.day.slice(5))}
        csvCategories={perDay.map((d) => d.day)}
        series={[
          { label: 'Sends', color: 'var(--c-primary)', values: perDay.map((d) => d.sends) },
          { label: 'Bounce rate', color: 'var(--c-bad)', kind: 'share', values: perDay.map((d) => (d.sends > 0 ? d.bounces / d.sends : null)) },
          ...(placed > 0 ? [{ label: 'Inbox placement', color: '#2c7a7b', kind: 'share' as const, values: perDay.map((d) => (d.inbox + d.junk > 0 ? d.inbox / (d.inbox + d.junk) : null)) }] : []),
        ]}
      />
    </section>
  );
}

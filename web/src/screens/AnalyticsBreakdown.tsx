import { useState } from 'react';
import { api, ws } from '../api.ts';
import type { AnalyticsBreakdown } from '../types.ts';
import { ErrorNote } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

type By = AnalyticsBreakdown['by'];
type Row = AnalyticsBreakdown['rows'][number];

const BY: ReadonlyArray<[By, string]> = [
  ['sequence', 'Sequence'],
  ['step', 'Step'],
  ['variant', 'Variant'],
  ['mailbox', 'Mailbox'],
  ['rep', 'Rep'],
];

/** The columns after the row's name: a count, or a rate per email sent shown as a percentage. */
const COLUMNS: ReadonlyArray<{ key: keyof Row; label: string; rate?: true }> = [
  { key: 'sends', label: 'Sends' },
  { key: 'opened', label: 'Opened by a person' },
  { key: 'openedAutomatically', label: 'Opened automatically' },
  { key: 'clicked', label: 'Clicked' },
  { key: 'replies', label: 'Replies' },
  { key: 'replyRate', label: 'Reply rate', rate: true },
  { key: 'positiveReplies', label: 'Interested' },
  { key: 'meetings', label: 'Meetings' },
  { key: 'hardBounces', label: 'Hard bounces' },
  { key: 'softBounces', label: 'Soft bounces' },
  { key: 'bounceRate', label: 'Bounce rate', rate: true },
  { key: 'unsubscribes', label: 'Unsubscribes' },
];

const pct = (v: number | null) => (v === null ? '—' : `${(v * 100).toFixed(1)}%`);

/**
 * The window's figures per sequence, step, variant, mailbox or rep (GET …/analytics/breakdown): the
 * rows sum to the headline, so the row of facts no email can take (a reply before any email) is
 * shown too. Every column sorts; the CSV has the same rows.
 */
export function BreakdownTable({ workspaceId, query }: { workspaceId: string; query: string }) {
  const [by, setBy] = useState<By>('sequence');
  const [sort, setSort] = useState<{ key: keyof Row; desc: boolean }>({ key: 'sends', desc: true });
  const q = `by=${by}&${query}`;
  const b = useLoad(() => api<AnalyticsBreakdown>('GET', ws(workspaceId, `analytics/breakdown?${q}`)), [workspaceId, q]);
  const rows = [...(b.data?.rows ?? [])].sort((x, y) => {
    const [a, c] = [x[sort.key], y[sort.key]];
    const order = typeof a === 'string' || typeof c === 'string' ? String(a ?? '').localeCompare(String(c ?? '')) : (Number(a ?? -1) - Number(c ?? -1));
    return sort.desc ? -order : order;
  });
  const header = (key: keyof Row, label: string) => {
    const on = sort.key === key;
    return (
      <th key={key} scope="col" aria-sort={on ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
        <button type="button" className="th-sort" onClick={() => setSort({ key, desc: on ? !sort.desc : key !== 'label' })}>
          {label}
          <span aria-hidden="true">{on ? (sort.desc ? ' ▼' : ' ▲') : ''}</span>
        </button>
      </th>
    );
  };
  const byLabel = BY.find(([k]) => k === by)![1];
  return (
    <section className="card" data-testid="analytics-breakdown">
      <h2>Breakdown</h2>
      <div className="toolbar" role="group" aria-label="Breakdown">
        <label>
          By{' '}
          <select value={by} onChange={(e) => setBy(e.target.value as By)} data-testid="breakdown-by">
            {BY.map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <a className="btn btn-quiet" href={ws(workspaceId, `analytics/breakdown.csv?${q}`)} download data-testid="breakdown-csv">
          Download this table as CSV
        </a>
      </div>
      <p className="muted small">
        Each figure is credited to one email: a send and its opens and clicks to that email, a reply, bounce, unsubscribe or meeting to the last email sent before it.
        A rep is the member who owns the mailbox. Rates are per email sent.
      </p>
      <ErrorNote error={b.error} />
      {b.data && (rows.length === 0 ? (
        <p className="muted">Nothing in this period.</p>
      ) : (
        <div className="table-scroll">
          <table className="table table-compact" data-testid="breakdown-table">
            <caption className="sr-only">Figures per {byLabel.toLowerCase()}, sortable by each column</caption>
            <thead>
              <tr>
                {header('label', byLabel)}
                {COLUMNS.map((c) => header(c.key, c.label))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.key ?? 'none'}>
                  <th scope="row" className={r.key === null ? 'muted' : undefined}>{r.label}</th>
                  {COLUMNS.map((c) => (
                    <td key={c.key}>{c.rate ? pct(r[c.key] as number | null) : (r[c.key] as number).toLocaleString()}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </section>
  );
}

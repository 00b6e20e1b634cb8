import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { CsvButton } from './CsvButton.tsx';

/**
 * A daily line chart drawn by uPlot (a small, well-kept canvas charting library): hovering shows
 * each day's exact values, the plot follows its container's width (a phone or a 1440 px screen),
 * and the legend and the table below it carry the same numbers for screen readers.
 */

interface Series<K extends string> {
  key: K;
  label: string;
  /** A CSS colour, or a custom property such as `var(--c-primary)` (read from the page). */
  color: string;
}

const HEIGHT = 240;
/** The y axis' tick steps: whole counts, 1, 2, 5, 10, 20, 50… */
const WHOLE_STEPS = Array.from({ length: 8 }, (_, i) => [1, 2, 5].map((m) => m * 10 ** i)).flat();

/** A colour a canvas understands: `var(--x)` is looked up on the document. */
function resolveColor(color: string): string {
  const m = /^var\((--[\w-]+)\)$/.exec(color);
  return m ? getComputedStyle(document.documentElement).getPropertyValue(m[1]!).trim() || '#555' : color;
}

/** Noon UTC of a 'YYYY-MM-DD' day, in seconds (uPlot's time scale): the label is that calendar day in any zone. */
const daySeconds = (day: string) => Date.parse(`${day}T12:00:00Z`) / 1000;

/** Draws a uPlot chart in `el`, as wide as it is (at least a phone's 280 px), and follows its width; returns the clean-up. */
function mountPlot(el: HTMLDivElement, options: Omit<uPlot.Options, 'width' | 'height'>, data: uPlot.AlignedData): () => void {
  const plot = new uPlot({ ...options, width: Math.max(280, el.clientWidth), height: HEIGHT }, data, el);
  const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: HEIGHT }));
  resize.observe(el);
  return () => {
    resize.disconnect();
    plot.destroy();
  };
}

/** `csvName`: the CSV file's name (without .csv) for the table's download. */
export function DailyChart<K extends string>({ days, series, csvName }: { days: Array<{ day: string } & Record<K, number>>; series: readonly Series<K>[]; csvName: string }) {
  const box = useRef<HTMLDivElement>(null);
  // Callers pass the series inline: the chart is drawn again when what they say changes, not their identity.
  const seriesKey = series.map((s) => `${s.key}:${s.label}:${s.color}`).join('|');
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [days.map((d) => daySeconds(d.day)), ...series.map((s) => days.map((d) => d[s.key]))];
    return mountPlot(
      el,
      {
        // The days are calendar days already (the server counted them in the chosen zone): shown as UTC dates, never shifted.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: false },
        cursor: { points: { size: 6 } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        // Counts are whole: the y axis steps by whole numbers only.
        axes: [{ stroke: '#667085', grid: { stroke: '#eaeef2' } }, { stroke: '#667085', grid: { stroke: '#eaeef2' }, size: 44, incrs: WHOLE_STEPS }],
        series: [{ label: 'Day' }, ...series.map((s) => ({ label: s.label, stroke: resolveColor(s.color), width: 2, points: { show: false } }))],
      },
      data,
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps -- seriesKey stands for series
  }, [days, seriesKey]);
  return (
    <figure className="chart">
      <div ref={box} className="chart-plot" role="img" aria-label={`Per day: ${series.map((s) => s.label).join(', ')}`} />
      <figcaption className="legend">
        {series.map((s) => (
          <span key={s.key}>
            <span className="swatch" style={{ background: s.color }} aria-hidden="true" /> {s.label}
          </span>
        ))}
      </figcaption>
      {/* The numbers behind the lines, for screen readers and for anyone who wants them exact. */}
      <details className="chart-table">
        <summary>The days with activity, as a table</summary>
        <table className="table table-compact">
          <thead>
            <tr>
              <th scope="col">Day</th>
              {series.map((s) => (
                <th key={s.key} scope="col">
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {days
              .filter((d) => series.some((s) => d[s.key] > 0))
              .map((d) => (
                <tr key={d.day}>
                  <th scope="row">{d.day}</th>
                  {series.map((s) => (
                    <td key={s.key}>{d[s.key]}</td>
                  ))}
                </tr>
              ))}
          </tbody>
        </table>
        <CsvButton
          what={`the ${csvName.replace(/-/g, ' ')} table`}
          filename={`${csvName}.csv`}
          header={['day', ...series.map((s) => s.label)]}
          rows={days.filter((d) => series.some((s) => d[s.key] > 0)).map((d) => [d.day, ...series.map((s) => d[s.key])])}
        />
      </details>
    </figure>
  );
}

/** A series of a bar chart: bars of counts, or a line of shares (0–1) on a percentage axis at the right. */
export interface BarSeries {
  label: string;
  color: string;
  values: ReadonlyArray<number | null>;
  kind?: 'bars' | 'share';
}

const pctText = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${(v * 100).toFixed(1)}%`);

/**
 * Bars over named categories (a funnel's stages, reply-time buckets, hours, days), drawn by uPlot
 * like the daily chart: the first series as bars of counts, any `share` series as lines on a
 * percentage axis; hovering shows the values, and the table below holds the same numbers.
 */
export function BarChart({ title, categories, series, testId, csvName, csvCategories }: {
  title: string;
  categories: readonly string[];
  series: readonly BarSeries[];
  testId?: string;
  /** The CSV file's name (without .csv) for the table's download. */
  csvName: string;
  /** The categories as the CSV writes them, where the bars' labels are shortened (a day as MM-DD). */
  csvCategories?: readonly string[];
}) {
  const box = useRef<HTMLDivElement>(null);
  const key = JSON.stringify([categories, series]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const hasShare = series.some((s) => s.kind === 'share');
    const data: uPlot.AlignedData = [categories.map((_, i) => i), ...series.map((s) => s.values.map((v) => v ?? null))];
    const bars = uPlot.paths.bars!({ size: [0.7, 64], align: 0 });
    return mountPlot(
      el,
      {
        legend: { show: false },
        cursor: { points: { size: 6 } },
        scales: {
          // Categories, evenly spaced: half a slot of room at each end for the first and last bar.
          x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
          share: { range: [0, 1] },
        },
        axes: [
          { stroke: '#667085', grid: { show: false }, incrs: [1], values: (_u, ticks) => ticks.map((t) => categories[t] ?? '') },
          { stroke: '#667085', grid: { stroke: '#eaeef2' }, size: 44, incrs: WHOLE_STEPS },
          ...(hasShare ? [{ side: 1 as const, scale: 'share', stroke: '#667085', grid: { show: false }, size: 44, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => `${Math.round(t * 100)}%`) }] : []),
        ],
        series: [
          { label: 'Category' },
          ...series.map((s) =>
            s.kind === 'share'
              ? { label: s.label, scale: 'share', stroke: resolveColor(s.color), width: 2, spanGaps: true, points: { show: true, size: 5 }, value: (_u: uPlot, v: number | null) => pctText(v) }
              : { label: s.label, stroke: resolveColor(s.color), fill: resolveColor(s.color), width: 0, paths: bars, points: { show: false } },
          ),
        ],
      },
      data,
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps -- key stands for categories and series
  }, [key]);
  return (
    <figure className="chart" data-testid={testId}>
      <div ref={box} className="chart-plot" role="img" aria-label={`${title}: ${series.map((s) => s.label).join(', ')}`} />
      <figcaption className="legend">
        {series.map((s) => (
          <span key={s.label}>
            <span className="swatch" style={{ background: s.color }} aria-hidden="true" /> {s.label}
          </span>
        ))}
      </figcaption>
      <details className="chart-table">
        <summary>{title}, as a table</summary>
        <table className="table table-compact">
          <thead>
            <tr>
              <th scope="col">{title}</th>
              {series.map((s) => (
                <th key={s.label} scope="col">
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {categories.map((c, i) => (
              <tr key={c}>
                <th scope="row">{c}</th>
                {series.map((s) => (
                  <td key={s.label}>{s.kind === 'share' ? pctText(s.values[i]) : (s.values[i] ?? 0).toLocaleString()}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
        <CsvButton
          what={`the ${title.toLowerCase()} table`}
          filename={`${csvName}.csv`}
          header={[title, ...series.map((s) => (s.kind === 'share' ? `${s.label} (share)` : s.label))]}
          rows={(csvCategories ?? categories).map((c, i) => [c, ...series.map((s) => s.values[i] ?? (s.kind === 'share' ? null : 0))])}
        />
      </details>
    </figure>
  );
}

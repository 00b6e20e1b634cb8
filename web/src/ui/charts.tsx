import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

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

export function DailyChart<K extends string>({ days, series }: { days: Array<{ day: string } & Record<K, number>>; series: readonly Series<K>[] }) {
  const box = useRef<HTMLDivElement>(null);
  // Callers pass the series inline: the chart is drawn again when what they say changes, not their identity.
  const seriesKey = series.map((s) => `${s.key}:${s.label}:${s.color}`).join('|');
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [days.map((d) => daySeconds(d.day)), ...series.map((s) => days.map((d) => d[s.key]))];
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: HEIGHT,
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
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
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
      </details>
    </figure>
  );
}

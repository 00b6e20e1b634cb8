/**
 * A daily line chart in plain SVG: four series over at most a few months need no chart library,
 * and an SVG scales crisply and can carry a title and a table fallback for screen readers.
 */

interface Series<K extends string> {
  key: K;
  label: string;
  color: string;
}

export function DailyChart<K extends string>({ days, series }: { days: Array<{ day: string } & Record<K, number>>; series: readonly Series<K>[] }) {
  const W = 900;
  const H = 240;
  const pad = { l: 40, r: 12, t: 12, b: 28 };
  const max = Math.max(1, ...days.flatMap((d) => series.map((s) => d[s.key])));
  const x = (i: number) => pad.l + (days.length <= 1 ? 0 : (i / (days.length - 1)) * (W - pad.l - pad.r));
  const y = (v: number) => H - pad.b - (v / max) * (H - pad.t - pad.b);
  const ticks = [0, Math.round(max / 2), max];
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Per day: ${series.map((s) => s.label).join(', ')}`}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={pad.l} x2={W - pad.r} y1={y(t)} y2={y(t)} className="chart-grid" />
            <text x={pad.l - 6} y={y(t) + 4} textAnchor="end" className="chart-label">
              {t}
            </text>
          </g>
        ))}
        {days.map((d, i) =>
          // Counted back from the last day, so that today always has its label.
          (days.length - 1 - i) % Math.max(1, Math.ceil(days.length / 8)) === 0 ? (
            <text key={d.day} x={x(i)} y={H - 8} textAnchor="middle" className="chart-label">
              {d.day.slice(5)}
            </text>
          ) : null,
        )}
        {series.map((s) => (
          <polyline key={s.key} fill="none" stroke={s.color} strokeWidth={2} points={days.map((d, i) => `${x(i)},${y(d[s.key])}`).join(' ')} />
        ))}
      </svg>
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

import { csvRecord } from '../../../src/common/csv-write.ts';
import { saveFile } from './download.ts';

/**
 * A table the screen already holds, saved as CSV (issue 18: every table as CSV). The tables the
 * server cannot serve as a file of their own (a chart's numbers, the per-step and per-variant
 * reply rates, the mailboxes' health) are written here from the same rows the table shows, by the
 * one CSV writer (src/common/csv-write.ts: RFC 4180, formulas neutralised). Numbers are written
 * plain (a share as a fraction, 0–1), empty where the table shows a dash.
 */
export type CsvCell = string | number | null | undefined;

export function tableCsv(header: readonly string[], rows: ReadonlyArray<readonly CsvCell[]>): string {
  const cell = (c: CsvCell) => (c === null || c === undefined ? '' : typeof c === 'number' ? String(Number.isInteger(c) ? c : Number(c.toFixed(6))) : c);
  return [header, ...rows].map((r) => csvRecord(r.map(cell))).join('');
}

/** "Download … as CSV": `what` names the table for the button's label (several sit on one screen). */
export function CsvButton({ what, filename, header, rows }: { what: string; filename: string; header: readonly string[]; rows: ReadonlyArray<readonly CsvCell[]> }) {
  return (
    <button type="button" className="btn btn-quiet" onClick={() => saveFile(new Blob([tableCsv(header, rows)], { type: 'text/csv' }), filename)}>
      Download {what} as CSV
    </button>
  );
}

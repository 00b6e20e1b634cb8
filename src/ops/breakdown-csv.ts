import { csvRecord } from '../common/csv-write.ts';
import { DAY_SERIES, RATES, type BreakdownBy, type BreakdownRow, type Rates } from './figures.ts';

/** The columns of a breakdown row after its label, in the order the CSV writes them. */
export const BREAKDOWN_COLUMNS = [...DAY_SERIES, 'hardBounces', 'softBounces', ...RATES] as const;

/**
 * A breakdown as CSV (RFC 4180 records): its label, id, then every figure and rate, a rate empty
 * where nothing was sent. GET …/analytics/breakdown.csv and the weekly report's attachment.
 */
export function breakdownCsv(by: BreakdownBy, rows: ReadonlyArray<BreakdownRow & Rates>): string {
  const cell = (v: number | null) => (v === null ? '' : String(v));
  return [csvRecord([by, 'id', ...BREAKDOWN_COLUMNS]), ...rows.map((r) => csvRecord([r.label, r.key ?? '', ...BREAKDOWN_COLUMNS.map((k) => cell(r[k]))]))].join('');
}

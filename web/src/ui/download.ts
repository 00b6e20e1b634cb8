/**
 * Saves data the app already holds as a file, through a link clicked in script: the answer of a
 * POST (a subject access export) cannot be a plain download link. The object URL is let go a
 * minute later, not at once: a browser may still be reading it when click() returns.
 */
export function saveFile(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A file name from free text (an email address): letters, digits, dot, dash, underscore and @ kept. */
export function safeFileName(s: string): string {
  return s.replace(/[^\w.@-]+/g, '_').slice(0, 120) || 'file';
}

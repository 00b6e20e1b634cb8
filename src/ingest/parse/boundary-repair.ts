/**
 * A multipart message whose declared boundary never occurs in its body: some MTAs rewrite the
 * Content-Type header (or its boundary) and leave the body as it was, so the header says
 * `boundary="A.1720293561/host"` and the parts are delimited by `--A.1528513261/host`. A MIME
 * parser then finds no part at all: no text, no delivery-status part, and a bounce's Status is
 * lost. When the declared boundary is absent and the body opens parts with one other delimiter
 * line, the header is rewritten to that delimiter and the message parsed again.
 */

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY = 70;
/** The first delimiter line is in the preamble or just after it; past this the body is not a multipart we can mend. */
const MAX_SCAN_LINES = 2_000;

/** The raw message with its boundary parameter set to the delimiter the body uses; null when there is nothing to mend. */
export function repairedBoundary(bytes: Uint8Array, maxHeaderBytes: number): Uint8Array | null {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const sep = /\r?\n\r?\n/.exec(text.slice(0, maxHeaderBytes));
  if (!sep) return null;
  const header = text.slice(0, sep.index);
  const body = text.slice(sep.index + sep[0].length);
  const declared = declaredBoundary(header);
  if (!declared || body.includes(`--${declared.value}`)) return null;
  const used = firstDelimiter(body);
  if (!used || used === declared.value) return null;
  // The delimiter must occur again (a second part or the closing line), not once by chance.
  if (!body.includes(`\n--${used}`, body.indexOf(`--${used}`) + used.length + 2)) return null;
  const mended = `${header.slice(0, declared.start)}"${used}"${header.slice(declared.end)}${text.slice(sep.index)}`;
  return Uint8Array.from(Buffer.from(mended, 'latin1'));
}

/** The top-level Content-Type's boundary parameter and where its value sits in the header. */
function declaredBoundary(header: string): { value: string; start: number; end: number } | null {
  const lines = header.split('\n');
  let at = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^content-type[ \t]*:/i.test(line)) {
      // Unfold the field: its continuation lines start with white space.
      let end = at + line.length;
      for (let j = i + 1; j < lines.length && /^[ \t]/.test(lines[j]!); j++) end += 1 + lines[j]!.length;
      const field = header.slice(at, end);
      if (!/^content-type[ \t]*:[ \t]*multipart\//i.test(field.replace(/\s+/g, ' '))) return null;
      const m = /;\s*boundary\s*=\s*(?:"([^"\r\n]{1,70})"|([^\s;"]{1,70}))/i.exec(field);
      if (!m) return null;
      const value = m[1] ?? m[2]!;
      const start = at + m.index + m[0].length - (m[1] !== undefined ? value.length + 2 : value.length);
      return { value, start, end: start + (m[1] !== undefined ? value.length + 2 : value.length) };
    }
    at += line.length + 1;
  }
  return null;
}

/** The first line that reads as a part delimiter: "--" and a boundary, nothing else. */
function firstDelimiter(body: string): string | null {
  let from = 0;
  for (let n = 0; n < MAX_SCAN_LINES && from < body.length; n++) {
    let end = body.indexOf('\n', from);
    if (end < 0) end = body.length;
    const line = body.slice(from, end).replace(/\r$/, '').trimEnd();
    from = end + 1;
    if (line.length < 3 || line.length > MAX_BOUNDARY + 2 || !line.startsWith('--')) continue;
    const value = line.slice(2).replace(/--$/, '');
    if (value !== '' && !/^-*$/.test(value) && !/\s/.test(value)) return value;
  }
  return null;
}

/** Mail is read from its top; a broken multipart's text is taken from this much of its body. */
const MAX_FALLBACK_CHARS = 2 * 1024 * 1024;

/**
 * The body of a multipart that no boundary could split (a nested part's `boundary=` on an
 * unfolded line, a boundary that appears nowhere) as plain text: delimiter lines and the part
 * headers under them removed, the rest as written. Transfer encodings are not undone; the report
 * and reply rungs still find a bounce's prose and fields, or a reply's words, in it.
 */
export function unsplitBodyText(bytes: Uint8Array, maxHeaderBytes: number): string {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, maxHeaderBytes)).toString('latin1');
  const sep = /\r?\n\r?\n/.exec(head);
  if (!sep) return '';
  const start = sep.index + sep[0].length;
  const body = new TextDecoder().decode(bytes.subarray(start, start + MAX_FALLBACK_CHARS));
  const out: string[] = [];
  let inPartHeader = false;
  for (const raw of body.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (/^--\S/.test(line) && line.length <= MAX_BOUNDARY + 4) {
      inPartHeader = true;
      continue;
    }
    if (inPartHeader) {
      // Part header fields, their folded lines, and a bare parameter line a broken MTA did not fold.
      if (/^[A-Za-z][A-Za-z0-9-]{0,76}[ \t]*:/.test(line) || /^[ \t]+\S/.test(line) || /^[a-z-]{1,40}=/i.test(line)) continue;
      inPartHeader = false;
      if (line.trim() === '') continue;
    }
    out.push(line);
  }
  return out.join('\n').trim();
}

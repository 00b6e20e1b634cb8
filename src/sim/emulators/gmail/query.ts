import { normalizeMsgId, type GmailStoredMessage } from './mailbox.ts';

/**
 * The part of Gmail's search language (support.google.com/mail/answer/7190) the emulator serves:
 * rfc822msgid:, from: (an address: the sender's, case-insensitive; else a part of it), in:, label:, is:unread/read/starred, after:/before: (epoch seconds or YYYY/MM/DD,
 * read as UTC midnight; Gmail reads the date form in Pacific time), newer_than:/older_than: (Nd,
 * Nm, Ny; a month counted as 30 days, a year as 365), terms ANDed. Any other term is refused with a
 * 400 naming it, so that a connector using more than the emulator knows fails loudly in tests
 * instead of being answered wrongly.
 */
export type GmailQuery = {
  test(m: GmailStoredMessage): boolean;
  /** in:trash / in:spam / in:anywhere widen the search like includeSpamTrash. */
  includesSpamTrash: boolean;
};

export function parseGmailQuery(q: string, nowMs: number): { ok: true; query: GmailQuery } | { ok: false; message: string } {
  const tests: Array<(m: GmailStoredMessage) => boolean> = [];
  let includesSpamTrash = false;
  for (const term of q.trim().split(/\s+/).filter(Boolean)) {
    const m = /^([a-z0-9_]+):(.+)$/i.exec(term);
    if (!m) return { ok: false, message: `emulator: free-text search term not supported: ${term}` };
    const op = m[1]!.toLowerCase();
    const val = m[2]!;
    switch (op) {
      case 'rfc822msgid': {
        const want = normalizeMsgId(val);
        tests.push((x) => x.parsed.messageId !== null && normalizeMsgId(x.parsed.messageId) === want);
        break;
      }
      case 'from': {
        const want = val.toLowerCase();
        tests.push((x) => {
          const from = x.parsed.from?.toLowerCase() ?? '';
          return want.includes('@') ? from === want : from.includes(want);
        });
        break;
      }
      case 'in':
      case 'label': {
        const v = val.toUpperCase();
        if (v === 'ANYWHERE') {
          includesSpamTrash = true;
          break;
        }
        if (v === 'TRASH' || v === 'SPAM') includesSpamTrash = true;
        tests.push((x) => x.labelIds.has(v));
        break;
      }
      case 'is': {
        const v = val.toLowerCase();
        if (v === 'unread') tests.push((x) => x.labelIds.has('UNREAD'));
        else if (v === 'read') tests.push((x) => !x.labelIds.has('UNREAD'));
        else if (v === 'starred') tests.push((x) => x.labelIds.has('STARRED'));
        else return { ok: false, message: `emulator: search term not supported: ${term}` };
        break;
      }
      case 'after':
      case 'before': {
        const at = instant(val);
        if (at === null) return { ok: false, message: `emulator: invalid date in ${term}` };
        tests.push(op === 'after' ? (x) => x.internalDate > at : (x) => x.internalDate < at);
        break;
      }
      case 'newer_than':
      case 'older_than': {
        const span = /^(\d+)([dmy])$/.exec(val.toLowerCase());
        if (!span) return { ok: false, message: `emulator: invalid period in ${term}` };
        const days = Number(span[1]) * { d: 1, m: 30, y: 365 }[span[2] as 'd' | 'm' | 'y'];
        const at = nowMs - days * 86_400_000;
        tests.push(op === 'newer_than' ? (x) => x.internalDate > at : (x) => x.internalDate < at);
        break;
      }
      default:
        return { ok: false, message: `emulator: search operator not supported: ${op}:` };
    }
  }
  return { ok: true, query: { test: (x) => tests.every((t) => t(x)), includesSpamTrash } };
}

/** after:/before: values: epoch seconds, or a YYYY/MM/DD date. */
function instant(v: string): number | null {
  if (/^\d{9,}$/.test(v)) return Number(v) * 1000;
  const d = /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/.exec(v);
  return d ? Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3])) : null;
}

import { normalizeMsgId, type GmailStoredMessage } from './mailbox.ts';

/**
 * The part of Gmail's search language (support.google.com/mail/answer/7190) the emulator serves:
 * rfc822msgid:, in:, label:, is:unread/read/starred, terms ANDed. Any other term is refused with a
 * 400 naming it, so that a connector using more than the emulator knows fails loudly in tests
 * instead of being answered wrongly.
 */
export type GmailQuery = {
  test(m: GmailStoredMessage): boolean;
  /** in:trash / in:spam / in:anywhere widen the search like includeSpamTrash. */
  includesSpamTrash: boolean;
};

export function parseGmailQuery(q: string): { ok: true; query: GmailQuery } | { ok: false; message: string } {
  const tests: Array<(m: GmailStoredMessage) => boolean> = [];
  let includesSpamTrash = false;
  for (const term of q.trim().split(/\s+/).filter(Boolean)) {
    const m = /^([a-z0-9]+):(.+)$/i.exec(term);
    if (!m) return { ok: false, message: `emulator: free-text search term not supported: ${term}` };
    const op = m[1]!.toLowerCase();
    const val = m[2]!;
    switch (op) {
      case 'rfc822msgid': {
        const want = normalizeMsgId(val);
        tests.push((x) => x.parsed.messageId !== null && normalizeMsgId(x.parsed.messageId) === want);
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
      default:
        return { ok: false, message: `emulator: search operator not supported: ${op}:` };
    }
  }
  return { ok: true, query: { test: (x) => tests.every((t) => t(x)), includesSpamTrash } };
}

import { MAX_TOKEN_LENGTH } from '../../common/sealed-token.ts';
import { openTrackingToken, type TrackingLinks } from './tracking.ts';

/**
 * List-Unsubscribe (RFC 2369) with one-click (RFC 8058), on every sequence email:
 *
 *   List-Unsubscribe: <https://track.example.com/t/u/TOKEN>,
 *    <mailto:rep@acme.com?subject=unsubscribe%20TOKEN>
 *   List-Unsubscribe-Post: List-Unsubscribe=One-Click
 *
 * The https link is the one-click endpoint (tracking/): a POST unsubscribes, a GET shows a page.
 * The mailto goes to the sending mailbox itself, with the token in the subject. Why there: that
 * mailbox is already watched by sync (ingest/), so no extra address or MX is needed, and a message
 * that receivers send on the prospect's behalf lands where replies land. Why the subject and not
 * a +tag in the local part: the token (~170 characters) is longer than the 64 octets a local part
 * may have (RFC 5321 §4.5.3.1.1), and plus-addressing is not supported by every host. Ingestion
 * calls recogniseUnsubscribeRequest on each inbound message; a human "please unsubscribe me" reply
 * has no token and is left to the classifier.
 *
 * Both headers must be covered by the DKIM signature for receivers to honour one-click
 * (RFC 8058 §4); dkim.ts signs them.
 */

export const LIST_UNSUBSCRIBE_POST = 'List-Unsubscribe=One-Click';
/** The word before the token in the mailto subject. */
export const UNSUBSCRIBE_SUBJECT_WORD = 'unsubscribe';

// RFC 6068 §2: characters of an addr-spec that may stand unencoded in a mailto URI.
const pctEncode = (s: string) =>
  Array.from(new TextEncoder().encode(s), (b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9._~!$'()*+,;:=-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');

export function unsubscribeMailto(mailboxEmail: string, token: string): string {
  const at = mailboxEmail.lastIndexOf('@');
  const addr = at > 0 ? `${pctEncode(mailboxEmail.slice(0, at))}@${pctEncode(mailboxEmail.slice(at + 1))}` : pctEncode(mailboxEmail);
  return `mailto:${addr}?subject=${UNSUBSCRIBE_SUBJECT_WORD}%20${token}`;
}

export interface ListUnsubscribe {
  /** The List-Unsubscribe value: the https link first (preferred by receivers), then the mailto. */
  listUnsubscribe: string;
  listUnsubscribePost: typeof LIST_UNSUBSCRIBE_POST;
  httpsUrl: string;
  mailto: string;
}

export function listUnsubscribe(links: TrackingLinks, mailboxEmail: string): ListUnsubscribe {
  const mailto = unsubscribeMailto(mailboxEmail, links.unsubscribeToken);
  return {
    listUnsubscribe: `<${links.unsubscribeUrl}>, <${mailto}>`,
    listUnsubscribePost: LIST_UNSUBSCRIBE_POST,
    httpsUrl: links.unsubscribeUrl,
    mailto,
  };
}

/** The address and token of one of our unsubscribe mailto URIs; null for anything else. */
export function parseUnsubscribeMailto(uri: string): { to: string; token: string } | null {
  const m = /^mailto:([^?]+)\?(.*)$/i.exec(uri.trim());
  if (!m) return null;
  let to: string;
  try {
    to = decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
  for (const pair of m[2]!.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).toLowerCase() !== 'subject') continue;
    let subject: string;
    try {
      subject = decodeURIComponent(pair.slice(eq + 1));
    } catch {
      return null;
    }
    const token = findToken(subject);
    return token ? { to, token } : null;
  }
  return null;
}

// A fresh RegExp per use: a shared global one carries lastIndex from one call into the next.
const tokenAfterWord = () => new RegExp(`\\bunsubscribe[\\s:]+([A-Za-z0-9_-]{40,${MAX_TOKEN_LENGTH}})`, 'gi');

function findToken(text: string): string | null {
  const m = tokenAfterWord().exec(text);
  return m ? m[1]! : null;
}

export interface UnsubscribeRequest {
  verdict: 'unsubscribe';
  confidence: 1;
  reason: string;
  workspaceId: string;
  sendRequestId: string;
}

/**
 * For ingestion: is this inbound message the List-Unsubscribe mailto of one of our emails? Looks
 * for "unsubscribe <token>" in the subject (and, for clients that move it, the text), and accepts
 * only a token this key sealed as an unsubscribe token, so it is certain or nothing. The caller
 * checks that the workspace is the mailbox's own.
 */
export function recogniseUnsubscribeRequest(key: Buffer, msg: { subject?: string | null; text?: string | null }): UnsubscribeRequest | null {
  for (const where of [msg.subject, msg.text?.slice(0, 10_000)]) {
    if (!where) continue;
    for (const m of where.matchAll(tokenAfterWord())) {
      const p = openTrackingToken(key, m[1]!);
      if (p?.k === 'u') {
        return {
          verdict: 'unsubscribe',
          confidence: 1,
          reason: `List-Unsubscribe mailto with a valid unsubscribe token for send request ${p.sr}`,
          workspaceId: p.ws,
          sendRequestId: p.sr,
        };
      }
    }
  }
  return null;
}

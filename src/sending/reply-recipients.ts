/**
 * Who an answer to an inbound message goes to (RFC 5322 3.6.2): the Reply-To addresses when the
 * message has them, else its From. "Reply all" adds, as Cc, everyone else the message was
 * addressed to (its To and Cc), as mail clients do. The workspace's own mailboxes never receive
 * the answer (a colleague's mailbox on the thread, the receiving mailbox itself), and nobody
 * appears twice. Addresses compare case-insensitively; the first spelling seen is kept.
 */

export interface ReplySource {
  from: string | null;
  replyTo: readonly string[];
  to: readonly string[];
  cc: readonly string[];
}

export type ReplyRecipients =
  | { ok: true; to: string[]; cc: string[]; via: 'reply_to' | 'from' }
  | { ok: false; reason: string };

export function replyRecipients(m: ReplySource, ownAddresses: Iterable<string>, replyAll: boolean): ReplyRecipients {
  const seen = new Set([...ownAddresses].map(norm));
  const take = (list: readonly (string | null)[]) => {
    const out: string[] = [];
    for (const a of list) {
      const k = a ? norm(a) : '';
      if (!k || !k.includes('@') || seen.has(k)) continue;
      seen.add(k);
      out.push(a!.trim());
    }
    return out;
  };
  const replyTo = m.replyTo.filter((a) => a.trim() !== '');
  let via: 'reply_to' | 'from' = replyTo.length ? 'reply_to' : 'from';
  let to = take(via === 'reply_to' ? replyTo : [m.from]);
  // Reply-To naming only our own mailboxes (a rep's message that came back): answer the sender.
  if (to.length === 0 && via === 'reply_to') {
    to = take([m.from]);
    via = 'from';
  }
  if (to.length === 0) return { ok: false, reason: "the message's sender and Reply-To are all this workspace's own mailboxes (or absent): there is no one to answer" };
  return { ok: true, to, cc: replyAll ? take([...m.to, ...m.cc]) : [], via };
}

function norm(a: string): string {
  return a.trim().toLowerCase();
}

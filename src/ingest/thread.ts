import { sql } from 'kysely';
import { normalizeEmail } from '../leads/email.ts';
import type { Tx } from '../store/store.ts';
import { UNNAMED } from '../store/prepared-statements.ts';
import type { EnrollmentTarget } from './act.ts';
import { TARGET_COLUMNS, toTarget, type TargetRow } from './store.ts';
import type { Classification, ParsedMail } from './types.ts';

/**
 * Threading: which of Cadenza's sends (and so which enrollment) an inbound message answers. A
 * ladder, strongest evidence first:
 *
 *   1. In-Reply-To / References name a Message-ID Cadenza sent (any mailbox of the workspace: a
 *      prospect may answer from a forward). For a bounce or complaint, the original Message-ID the
 *      report quotes comes first.
 *   2. The provider's thread id (Gmail threadId, Graph conversationId) of one of our sends.
 *   3. The sender's address and the normalised subject against recent sends to that address from
 *      this mailbox (clients that drop In-Reply-To, webmail "reply" that starts a new thread).
 *      For a bounce: the failed recipient against recent sends from this mailbox.
 *
 * A message that matches nothing still goes to the unified inbox; it is never dropped. A message
 * whose own Message-ID is one Cadenza sent is ours (a Sent copy, a Bcc to self): never a reply.
 *
 * The ladder itself (`matchThread`) is pure; `loadThreadContext` gathers, in one query per batch,
 * the sends the ladder may need.
 */

/** One of Cadenza's outbound messages, as the ladder needs it. */
export interface OutboundRef {
  messageId: string;
  mailboxId: string | null;
  enrollmentId: string | null;
  sendRequestId: string | null;
  threadId: string | null;
  subject: string | null;
  /** The lead's normalised address (for sends that belong to an enrollment). */
  toNorm: string | null;
  at: number;
}

export type ThreadVia = 'in_reply_to' | 'references' | 'bounce_message_id' | 'provider_thread' | 'subject' | 'bounce_recipient' | 'none';

export type ThreadMatch =
  | { kind: 'own'; ref: OutboundRef }
  | { kind: 'matched'; via: ThreadVia; ref: OutboundRef }
  | { kind: 'none' };

/** What the store found for a batch: sends by Message-ID and by provider thread, recent sends by address. */
export interface ThreadContext {
  byMessageId: Map<string, OutboundRef>;
  byThreadId: Map<string, OutboundRef>;
  /** Newest first. */
  recentByAddress: Map<string, OutboundRef[]>;
}

/** The context as the store reads it: with the enrollments of its sends, as targets (act.ts). */
export interface LoadedThreadContext extends ThreadContext {
  targets: Map<string, EnrollmentTarget>;
}

export interface ThreadInput {
  mail: Pick<ParsedMail, 'messageId' | 'inReplyTo' | 'references' | 'subject' | 'from'>;
  threadId: string | null;
  classification: Pick<Classification, 'label' | 'bounce' | 'feedback'>;
}

// Reply and forward prefixes as mail clients write them: English, German (AW, WG), Nordic (SV, VS,
// VB, VS), Dutch (Antw, Doorst), French (TR, RE), Spanish/Portuguese (RV, RES, ENC), Italian (R, RIF,
// I), Polish (ODP, PD), Czech (Odp, Fwd), Finnish (VS, VL), Turkish (YNT, İLT), Greek, Russian,
// Chinese and Japanese ones; with an optional counter ("Re[2]:", "Re(3):") and the space Outlook
// puts before the colon in French ("RE :"). Full-width colons too.
const PREFIX =
  /^\s*(?:re|fw|fwd|aw|wg|sv|vs|vb|vl|antw|antwort|doorst|tr|rv|res|enc|r|rif|i|odp|pd|ynt|ilt|İlt|απ|σχετ|πρθ|ответ|отв|пересл|回复|回覆|答复|答覆|转发|轉寄|返信|転送)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]\s*/iu;
const LIST_TAG = /^\s*\[[^\]]{1,40}\]\s*/u;

/** The subject without reply/forward prefixes and list tags, lower-cased, spaces collapsed. */
export function normaliseSubject(subject: string | null | undefined): string {
  // Bounded: each pass removes at least one character of at most 1,000 (a longer subject is cut,
  // which keeps a hostile one cheap and compares two long ones by their start).
  let s = (subject ?? '').slice(0, 1000).normalize('NFC');
  for (;;) {
    const next = s.replace(PREFIX, '').replace(LIST_TAG, '');
    if (next === s) break;
    s = next;
  }
  return s.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** Every Message-ID the message refers to, most specific first: In-Reply-To, then References newest to oldest. */
export function referencedIds(mail: Pick<ParsedMail, 'inReplyTo' | 'references'>): Array<{ id: string; via: 'in_reply_to' | 'references' }> {
  const out: Array<{ id: string; via: 'in_reply_to' | 'references' }> = [];
  const seen = new Set<string>();
  if (mail.inReplyTo) {
    out.push({ id: mail.inReplyTo, via: 'in_reply_to' });
    seen.add(mail.inReplyTo);
  }
  for (let i = mail.references.length - 1; i >= 0; i--) {
    const id = mail.references[i]!;
    if (!seen.has(id)) {
      seen.add(id);
      out.push({ id, via: 'references' });
    }
  }
  return out;
}

/** The addresses a report says failed (bounce recipients, the complained-about recipient). */
function reportedRecipients(c: ThreadInput['classification']): string[] {
  const out = [...(c.bounce?.recipients ?? []), ...(c.bounce?.recipient ? [c.bounce.recipient] : []), ...(c.feedback?.recipient ? [c.feedback.recipient] : [])];
  return [...new Set(out.map((a) => normalizeEmail(a)).filter((a): a is string => a !== null))];
}

function isReport(c: ThreadInput['classification']): boolean {
  return c.label === 'bounce' || c.label === 'feedback' || c.label === 'delivery_report';
}

/** The ladder. Pure. */
export function matchThread(input: ThreadInput, ctx: ThreadContext): ThreadMatch {
  const { mail, classification: c } = input;
  if (mail.messageId) {
    const own = ctx.byMessageId.get(mail.messageId);
    if (own) return { kind: 'own', ref: own };
  }
  const original = c.bounce?.originalMessageId ?? c.feedback?.originalMessageId ?? null;
  if (original) {
    const ref = ctx.byMessageId.get(original);
    if (ref) return { kind: 'matched', via: 'bounce_message_id', ref };
  }
  for (const { id, via } of referencedIds(mail)) {
    const ref = ctx.byMessageId.get(id);
    if (ref) return { kind: 'matched', via, ref };
  }
  if (input.threadId) {
    const ref = ctx.byThreadId.get(input.threadId);
    if (ref) return { kind: 'matched', via: 'provider_thread', ref };
  }
  if (isReport(c)) {
    // A report comes from a mailer daemon, whose address and subject say nothing about the prospect.
    for (const addr of reportedRecipients(c)) {
      const ref = ctx.recentByAddress.get(addr)?.[0];
      if (ref) return { kind: 'matched', via: 'bounce_recipient', ref };
    }
    return { kind: 'none' };
  }
  const from = mail.from?.address ? normalizeEmail(mail.from.address) : null;
  if (from) {
    const want = normaliseSubject(mail.subject);
    const ref = want ? ctx.recentByAddress.get(from)?.find((r) => normaliseSubject(r.subject) === want) : undefined;
    if (ref) return { kind: 'matched', via: 'subject', ref };
  }
  return { kind: 'none' };
}

/** The Message-IDs, thread ids and addresses a batch's ladder may look up. */
export function threadKeys(inputs: ThreadInput[]): { messageIds: string[]; threadIds: string[]; addresses: string[] } {
  const messageIds = new Set<string>();
  const threadIds = new Set<string>();
  const addresses = new Set<string>();
  for (const i of inputs) {
    if (i.mail.messageId) messageIds.add(i.mail.messageId);
    const original = i.classification.bounce?.originalMessageId ?? i.classification.feedback?.originalMessageId;
    if (original) messageIds.add(original);
    for (const r of referencedIds(i.mail)) messageIds.add(r.id);
    if (i.threadId) threadIds.add(i.threadId);
    if (isReport(i.classification)) for (const a of reportedRecipients(i.classification)) addresses.add(a);
    else if (i.mail.from?.address) {
      const a = normalizeEmail(i.mail.from.address);
      if (a) addresses.add(a);
    }
  }
  return { messageIds: [...messageIds], threadIds: [...threadIds], addresses: [...addresses] };
}

interface RefRow extends TargetRow {
  kind: 'id' | 'thread' | 'address';
  message_id: string;
  mailbox_id: string | null;
  enrollment_id: string | null;
  send_request_id: string | null;
  thread_id: string | null;
  subject: string | null;
  to_norm: string | null;
  at: Date;
}

const toRef = (r: RefRow): OutboundRef => ({
  messageId: r.message_id,
  mailboxId: r.mailbox_id,
  enrollmentId: r.enrollment_id,
  sendRequestId: r.send_request_id,
  threadId: r.thread_id,
  subject: r.subject,
  toNorm: r.to_norm,
  at: r.at.getTime(),
});

/**
 * The sends a batch's ladder may need, in one statement of three parts: by Message-ID across the
 * workspace, by provider thread id in this mailbox, and this mailbox's sends to the batch's
 * addresses within `recentMs` (a bounded number per address); a part whose keys are empty is left
 * out. Newest first within each map, sorted here (a union keeps no order). Each send's
 * enrollment comes with it as a target (store.ts TARGET_COLUMNS), so the batch needs no second
 * query for what it threads to.
 */
// -- name: ingest-thread-context
export async function loadThreadContext(
  tx: Tx,
  where: { workspaceId: string; mailboxId: string; since: number },
  keys: { messageIds: string[]; threadIds: string[]; addresses: string[] },
): Promise<LoadedThreadContext> {
  const ctx: LoadedThreadContext = { targets: new Map(), byMessageId: new Map(), byThreadId: new Map(), recentByAddress: new Map() };
  if (!keys.messageIds.length && !keys.threadIds.length && !keys.addresses.length) return ctx;
  const cols = sql`m.message_id, m.mailbox_id, m.enrollment_id, m.send_request_id, m.thread_id, m.subject, l.email_norm as to_norm, m.at, ${TARGET_COLUMNS}`;
  // Only the parts that have keys: planning a join costs more than running it on a handful of rows.
  const from = sql`from message m left join enrollment e on e.id = m.enrollment_id left join lead l on l.id = e.lead_id left join sequence s on s.id = e.sequence_id`;
  const parts = [];
  if (keys.messageIds.length) {
    parts.push(sql`select 'id' as kind, ${cols} ${from}
      where m.workspace_id = ${where.workspaceId} and m.direction = 'outbound' and m.message_id = any(${keys.messageIds}::text[])`);
  }
  if (keys.messageIds.length) {
    // A send whose record has not committed yet: its request carries the Message-ID from the claim
    // on. After a failover the record waits for the new primary while the sync, on its own
    // connections, may already read the reply; threaded only by the message table, that reply
    // would match nothing and its enrollment would go on to the follow-up.
    parts.push(sql`select 'id' as kind, r.message_id, r.mailbox_id, r.enrollment_id, r.id as send_request_id, null::text as thread_id, null::text as subject, l.email_norm as to_norm, coalesce(r.claimed_at, r.updated_at) as at, ${TARGET_COLUMNS}
      from send_request r join enrollment e on e.id = r.enrollment_id join lead l on l.id = e.lead_id join sequence s on s.id = e.sequence_id
      where r.workspace_id = ${where.workspaceId} and r.message_id = any(${keys.messageIds}::text[]) and r.state in ('in_flight', 'unknown', 'possibly_sent')`);
  }
  if (keys.threadIds.length) {
    parts.push(sql`select 'thread' as kind, ${cols} ${from}
      where m.mailbox_id = ${where.mailboxId} and m.direction = 'outbound' and m.thread_id = any(${keys.threadIds}::text[])`);
  }
  if (keys.addresses.length) {
    // Through the lead (lead_email index) and its enrollments (message_enrollment index), not a scan of to_addrs.
    parts.push(sql`(select 'address' as kind, ${cols}
      from lead l join enrollment e on e.lead_id = l.id join message m on m.enrollment_id = e.id join sequence s on s.id = e.sequence_id
      where l.workspace_id = ${where.workspaceId} and l.email_norm = any(${keys.addresses}::text[])
        and m.mailbox_id = ${where.mailboxId} and m.direction = 'outbound' and m.at >= ${new Date(where.since)}
      order by m.at desc
      limit ${50 * keys.addresses.length})`);
  }
  // Planned with its values each time: its generic plan (arrays and a limit of unknown size) cost
  // more server CPU than planning it, one message a batch (docs/benchmarks.md, "Ingestion").
  const r = await sql<RefRow>`${sql.raw(UNNAMED)} ${sql.join(parts, sql` union all `)}`.execute(tx);
  const rows = r.rows.sort((a, b) => b.at.getTime() - a.at.getTime());
  for (const row of rows) {
    if (row.target_id && !ctx.targets.has(row.target_id)) ctx.targets.set(row.target_id, toTarget(row));
    if (row.kind === 'id') {
      if (!ctx.byMessageId.has(row.message_id)) ctx.byMessageId.set(row.message_id, toRef(row));
    } else if (row.kind === 'thread') {
      if (row.thread_id && !ctx.byThreadId.has(row.thread_id)) ctx.byThreadId.set(row.thread_id, toRef(row));
    } else {
      const list = ctx.recentByAddress.get(row.to_norm!) ?? [];
      list.push(toRef(row));
      ctx.recentByAddress.set(row.to_norm!, list);
    }
  }
  return ctx;
}

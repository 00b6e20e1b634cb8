import { sql } from 'kysely';
import { cadenzaError } from '../common/errors.ts';
import type { SequenceSettings } from '../sequence/sequence-repo.ts';
import type { Tx, Db } from '../store/store.ts';
import type { EmailTemplate } from '../sequence/template/render.ts';
import type { LeadValues, SenderValues } from '../sequence/template/variables.ts';
import type { ThreadContext } from './compose/threading.ts';
import type { LookContext } from './mailbox-last-look.ts';
import type { Claim } from './outbox.ts';
import { threadMessagesSql } from '../sequence/sql/thread-chain.ts';
import { stepSignature } from '../mailbox/signature.ts';

/** Everything composing needs for one claimed request, read in one round of queries. */
export interface SendMaterial {
  template: EmailTemplate;
  lead: LeadValues;
  sender: SenderValues;
  /** The mailbox's signature unless the step says none (mailbox/signature.ts stepSignature), appended at compose time (common/email-html.ts withSignature). */
  signature: { html: string; text: string } | null;
  thread: ThreadContext | null;
  tracking: { opens: boolean; clicks: boolean; trackingDomain: string | null };
  /** What the mailbox last look reads (mailbox-last-look.ts contextSql), read here in the same statement. */
  look: LookContext;
}

type LeadRow = Pick<LeadValues, 'email' | 'first_name' | 'last_name' | 'company' | 'title' | 'phone' | 'country' | 'region'> & { custom: unknown };

/** A lead row as the template sees it; the preview and the save check use it too, so preview = send. */
export function leadValues(row: LeadRow): LeadValues {
  const custom = row.custom && typeof row.custom === 'object' ? (row.custom as Record<string, unknown>) : null;
  return { email: row.email, first_name: row.first_name, last_name: row.last_name, company: row.company, title: row.title, phone: row.phone, country: row.country, region: row.region, custom };
}

/** A mailbox row as `{{sender.*}}` sees it; the preview and the save check use it too. */
export function senderValues(m: { email: string; display_name: string | null }): SenderValues {
  return { email: m.email, name: m.display_name };
}

// -- name: send-material
// The variant chosen at planning time (or the step's first live variant), the lead, the mailbox,
// the sequence's and workspace's settings, the workspace's custom tracking host while it has a
// valid certificate (0034_tracking_domains.sql), and the earlier outbound messages of the thread
// the enrollment writes in (oldest first: its own, and those of the enrollments it was moved from
// sent from this mailbox, sequence/sql/thread-chain.ts); with them what the mailbox last look reads (its last-look-context: when the
// previous step was done, whether the lead ever wrote to this mailbox): one statement a send.
const materialSql = (claim: Claim) => sql<LeadRow & {
  has_variant: boolean | null;
  subject: string | null;
  body: string | null;
  body_html: string | null;
  signature_html: string | null;
  signature_text: string | null;
  step_signature: boolean | null;
  seq_settings: unknown;
  ws_settings: unknown;
  tracking_host: string | null;
  mailbox_email: string;
  display_name: string | null;
  earlier: Array<{ message_id: string; subject: string | null; thread_id: string | null }> | null;
  last_step_at: Date | null;
  created_at: Date;
  has_written: boolean;
}>`
  select v.has_variant, v.subject, v.body, v.body_html, m.signature_html, m.signature_text,
         (select (st.config->>'signature') <> 'false' from step st where st.id = ${claim.stepId}) as step_signature,
         l.email, l.first_name, l.last_name, l.company, l.title, l.phone, l.country, l.region, l.custom,
         s.settings as seq_settings, w.settings as ws_settings, m.email as mailbox_email, m.display_name,
         (select td.host from tracking_domain td where td.workspace_id = e.workspace_id and td.purpose = 'tracking' and td.state in ('active', 'renewing')) as tracking_host,
         (select json_agg(json_build_object('message_id', o.message_id, 'subject', o.subject, 'thread_id', o.thread_id) order by o.at, o.id)
          from (${threadMessagesSql(claim.enrollmentId, claim.mailboxId, true)}) o) as earlier,
         e.last_step_at, e.created_at,
         exists (select 1 from message i
                 where i.mailbox_id = ${claim.mailboxId} and i.direction = 'inbound' and lower(i.from_addr) = l.email_norm) as has_written
  from enrollment e
  join lead l on l.id = e.lead_id
  join sequence s on s.id = e.sequence_id
  join workspace w on w.id = e.workspace_id
  join mailbox m on m.id = e.mailbox_id
  left join lateral (
    select true as has_variant, subject, body, body_html from variant
    where ${claim.variantId ? sql`id = ${claim.variantId}` : sql`step_id = ${claim.stepId} and archived_at is null`}
    order by key limit 1) v on true
  where e.id = ${claim.enrollmentId}`;

/**
 * Reads what a claimed send needs (materialSql): the variant, the lead, the mailbox, the tracking
 * settings, and the earlier outbound messages so that a follow-up threads under them; a moved
 * lead's first email in its new sequence continues the thread it had with this mailbox (In-Reply-To
 * the last message, "Re: " + the thread's first subject when the step has no subject of its own).
 */
export async function loadSendMaterial(db: Db | Tx, claim: Claim): Promise<SendMaterial> {
  const row = (await materialSql(claim).execute(db)).rows[0];
  if (!row) throw cadenzaError('NOT_FOUND', `enrollment ${claim.enrollmentId} not found`);
  if (!row.has_variant) throw cadenzaError('NOT_FOUND', `no email content for step ${claim.stepId}`);
  const earlier = row.earlier ?? [];
  const seq = (row.seq_settings ?? {}) as SequenceSettings;
  const ws = (row.ws_settings ?? {}) as { trackingDomain?: string };
  return {
    template: { subject: row.subject, text: row.body!, html: row.body_html },
    signature: stepSignature({ signature: row.step_signature !== false }, row),
    lead: leadValues(row),
    sender: senderValues({ email: row.mailbox_email, display_name: row.display_name }),
    thread: earlier.length
      ? { messageIds: earlier.map((m) => m.message_id), firstSubject: earlier[0]!.subject ?? '', threadId: earlier.find((m) => m.thread_id)?.thread_id ?? null }
      : null,
    tracking: { opens: !!seq.trackOpens, clicks: !!seq.trackClicks, trackingDomain: row.tracking_host ?? ws.trackingDomain ?? null },
    // Our latest five Message-IDs to this enrollment, newest first, as last-look-context reads them.
    look: { email: row.email, last_step_at: row.last_step_at, created_at: row.created_at, ours: earlier.length ? earlier.slice(-5).reverse().map((m) => m.message_id) : null, has_written: row.has_written },
  };
}

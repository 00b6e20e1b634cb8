import { cadenzaError } from '../common/errors.ts';
import type { SequenceSettings } from '../sequence/sequence-repo.ts';
import type { Tx, Db } from '../store/store.ts';
import type { EmailTemplate } from '../sequence/template/render.ts';
import type { LeadValues, SenderValues } from '../sequence/template/variables.ts';
import type { ThreadContext } from './compose/threading.ts';
import type { Claim } from './outbox.ts';

/** Everything composing needs for one claimed request, read in one round of queries. */
export interface SendMaterial {
  template: EmailTemplate;
  lead: LeadValues;
  sender: SenderValues;
  thread: ThreadContext | null;
  tracking: { opens: boolean; clicks: boolean; trackingDomain: string | null };
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

/**
 * Reads what a claimed send needs: the variant chosen at planning time (or the step's first live
 * variant), the lead, the mailbox, the sequence's tracking settings, and the enrollment's earlier
 * outbound messages (oldest first) so that a follow-up threads under them.
 */
export async function loadSendMaterial(db: Db | Tx, claim: Claim): Promise<SendMaterial> {
  const variant = await db
    .selectFrom('variant')
    .select(['subject', 'body'])
    .where((eb) => (claim.variantId ? eb('id', '=', claim.variantId) : eb.and([eb('step_id', '=', claim.stepId), eb('archived_at', 'is', null)])))
    .orderBy('key')
    .executeTakeFirst();
  if (!variant) throw cadenzaError('NOT_FOUND', `no email content for step ${claim.stepId}`);
  const row = await db
    .selectFrom('enrollment as e')
    .innerJoin('lead as l', 'l.id', 'e.lead_id')
    .innerJoin('sequence as s', 's.id', 'e.sequence_id')
    .innerJoin('workspace as w', 'w.id', 'e.workspace_id')
    .innerJoin('mailbox as m', 'm.id', 'e.mailbox_id')
    .select(['l.email', 'l.first_name', 'l.last_name', 'l.company', 'l.title', 'l.phone', 'l.country', 'l.region', 'l.custom', 's.settings as seq_settings', 'w.settings as ws_settings', 'm.email as mailbox_email', 'm.display_name'])
    .where('e.id', '=', claim.enrollmentId)
    .executeTakeFirstOrThrow();
  const earlier = await db
    .selectFrom('message')
    .select(['message_id', 'subject', 'thread_id'])
    .where('enrollment_id', '=', claim.enrollmentId)
    .where('direction', '=', 'outbound')
    .orderBy('at')
    .orderBy('id')
    .execute();
  const seq = (row.seq_settings ?? {}) as SequenceSettings;
  const ws = (row.ws_settings ?? {}) as { trackingDomain?: string };
  return {
    template: { subject: variant.subject, text: variant.body },
    lead: leadValues(row),
    sender: senderValues({ email: row.mailbox_email, display_name: row.display_name }),
    thread: earlier.length
      ? { messageIds: earlier.map((m) => m.message_id), firstSubject: earlier[0]!.subject ?? '', threadId: earlier.find((m) => m.thread_id)?.thread_id ?? null }
      : null,
    tracking: { opens: !!seq.trackOpens, clicks: !!seq.trackClicks, trackingDomain: ws.trackingDomain ?? null },
  };
}

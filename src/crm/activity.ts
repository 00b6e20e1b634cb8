import type { CrmActivity, CrmActivityKind } from './connector.ts';
import type { CallMedia } from './call-media.ts';
import type { ClaimedActivity } from './sql/activities.ts';

/**
 * A queued fact in the CRM's words (docs/crm.md "Activities"): one line and a short text a sales
 * rep reads in the contact's timeline. Pure: everything comes from the outbox row (0054_crm.sql
 * payloads), what the claim joined to it (the message's subject, the sequence's name) and a call's
 * media (call-media.ts).
 */
const KINDS: ReadonlySet<string> = new Set<CrmActivityKind>(['email_sent', 'email_opened', 'email_clicked', 'email_replied', 'email_bounced', 'unsubscribed', 'call', 'task_completed']);

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length ? v : undefined);
const MAX_BODY = 4000;

export function toCrmActivity(row: ClaimedActivity, media: CallMedia = {}): CrmActivity {
  if (!KINDS.has(row.kind)) throw new Error(`not a CRM activity kind: ${row.kind}`);
  const kind = row.kind as CrmActivityKind;
  const p = row.payload;
  const detail = (p.detail ?? {}) as Record<string, unknown>;
  const seq = row.sequence_name ? ` (${row.sequence_name})` : '';
  const subject = row.subject ? `: ${row.subject}` : '';
  const base = { externalId: row.external_id, kind, email: row.email, occurredAt: row.occurred_at.toISOString() };
  switch (kind) {
    case 'email_sent':
      return { ...base, title: `Email sent${subject}${seq}`, body: `Sent by Cadenza${seq}.` };
    case 'email_replied':
      return { ...base, title: `Replied${subject}${seq}`, body: `The prospect replied${seq}; the sequence stopped for them.` };
    case 'email_opened': {
      const automatic = p.verdict === 'proxy';
      return { ...base, automatic, title: automatic ? `Email opened automatically (image proxy)${seq}` : `Email opened${seq}`, body: automatic ? 'An image proxy fetched the tracking image: not necessarily a person.' : 'Opened by the prospect.' };
    }
    case 'email_clicked':
      return { ...base, title: `Link clicked${seq}`, body: str(p.url) ? `Clicked ${str(p.url)}` : 'Clicked a link.' };
    case 'email_bounced': {
      const hard = detail.hard === true;
      return { ...base, title: `${hard ? 'Hard' : 'Soft'} bounce${seq}`, body: str(detail.reason) ?? (hard ? 'The address does not take mail.' : 'Delivery failed for now.') };
    }
    case 'unsubscribed':
      return { ...base, title: `Unsubscribed${seq}`, body: `The prospect unsubscribed${str(detail.source) ? ` (${str(detail.source)})` : ''}; Cadenza will not email them again.` };
    case 'task_completed':
      return { ...base, title: `Task done: ${str(p.title) ?? 'task'}${seq}`, body: [str(p.outcome) && `Outcome: ${str(p.outcome)}`, str(p.notes)].filter(Boolean).join('\n').slice(0, MAX_BODY) || 'Completed.' };
    case 'call': {
      const outcome = str(p.outcome) ?? 'logged';
      const durationSeconds = Math.round((typeof p.durationMs === 'number' ? p.durationMs : 0) / 1000);
      const direction = p.direction === 'inbound' ? 'inbound' : 'outbound';
      return {
        ...base,
        title: `${direction === 'inbound' ? 'Incoming call' : 'Call'}: ${outcome.replace('_', ' ')}`,
        body: (str(p.notes) ?? '').slice(0, MAX_BODY),
        call: { direction, outcome, durationSeconds, ...(media.recordingUrl ? { recordingUrl: media.recordingUrl } : {}), ...(media.transcript ? { transcript: media.transcript } : {}) },
      };
    }
  }
}

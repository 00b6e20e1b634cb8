import { escapeHtml } from '../../common/html.ts';
import type { CrmActivity } from '../connector.ts';

/**
 * Which HubSpot engagement each Cadenza activity becomes, and its properties, as HubSpot's
 * engagement guides name them (developers.hubspot.com/docs/api/crm/{emails,calls,tasks,notes}):
 *
 *   email_sent, email_replied          → emails (hs_email_direction EMAIL / INCOMING_EMAIL)
 *   call                               → calls  (duration in milliseconds, direction, status, outcome)
 *   task_completed                     → tasks  (hs_task_status COMPLETED)
 *   email_opened, email_clicked,
 *   email_bounced, unsubscribed        → notes  (HubSpot has no engagement for these)
 *
 * Every record carries `cadenza_activity_id`, the activity's id in lower case: a retry finds by it
 * what an earlier, lost answer wrote. Lower case because HubSpot's docs do not say whether search
 * compares string values with regard to case; written and searched the same way, it matches
 * either way (Cadenza's ids, `cadenza:event:123`, `cadenza:call:<uuid>`, are lower case already).
 */

export type EngagementType = 'emails' | 'calls' | 'tasks' | 'notes';
export const engagementTypes: readonly EngagementType[] = ['emails', 'calls', 'tasks', 'notes'];

/** The custom property (created by prepare()) that holds the activity's id. */
export const ACTIVITY_ID_PROPERTY = 'cadenza_activity_id';

/** Association type ids, engagement to contact, HUBSPOT_DEFINED, as each engagement's guide lists them. */
export const contactAssociationTypeId: Record<EngagementType, number> = { notes: 202, emails: 198, calls: 194, tasks: 204 };

export const activityKey = (externalId: string): string => externalId.toLowerCase();

/**
 * HubSpot's default call outcomes (hs_call_disposition takes the outcome's GUID; these six are the
 * defaults its calls guide lists). An account can delete or rename them; whether HubSpot then
 * refuses the GUID is unverified, and the outcome is in the call's body either way.
 */
const dispositions: Record<string, string> = {
  busy: '9d9162e7-6cf3-4944-bf63-4dff82258764',
  connected: 'f240bbac-87c9-4f6e-bf70-924b57d47db7',
  no_answer: '73a0d17f-1163-4015-bdd5-ec830791da20',
  voicemail: 'b2cf5968-551e-4856-9783-52b3da59a7d0',
  wrong_number: '17b47fee-58de-441e-a44c-c6300d46f273',
};

/** hs_call_status: the call's technical end (documented values); everything answered or left on a voicemail is COMPLETED. */
const callStatus: Record<string, string> = { no_answer: 'NO_ANSWER', busy: 'BUSY', dropped: 'FAILED' };

/** The notes guide's limit on hs_note_body, applied to every long text (the others' limits are unverified). */
const maxText = 65_536;

export function engagementFor(a: CrmActivity): { type: EngagementType; properties: Record<string, string> } {
  const base = { hs_timestamp: timestamp(a.occurredAt), [ACTIVITY_ID_PROPERTY]: activityKey(a.externalId) };
  switch (a.kind) {
    case 'email_sent':
    case 'email_replied': {
      const sent = a.kind === 'email_sent';
      const intent = !sent && a.replyIntent ? `\n\nClassified by Cadenza as: ${a.replyIntent}` : '';
      return {
        type: 'emails',
        properties: {
          ...base,
          hs_email_direction: sent ? 'EMAIL' : 'INCOMING_EMAIL',
          ...(sent ? { hs_email_status: 'SENT' } : {}),
          hs_email_subject: a.title,
          hs_email_text: cap(a.body + intent),
        },
      };
    }
    case 'call': {
      const c = a.call;
      const lines = [a.body, c ? `Outcome: ${c.outcome}` : '', c?.recordingUrl ? `Recording: ${c.recordingUrl}` : '', c?.transcript ? `Transcript:\n${c.transcript}` : ''];
      const disposition = c ? dispositions[c.outcome] : undefined;
      return {
        type: 'calls',
        properties: {
          ...base,
          hs_call_title: a.title,
          hs_call_body: html(lines.filter((l) => l !== '').join('\n\n')),
          ...(c
            ? {
                hs_call_direction: c.direction === 'inbound' ? 'INBOUND' : 'OUTBOUND',
                hs_call_duration: String(Math.round(c.durationSeconds * 1000)),
                hs_call_status: callStatus[c.outcome] ?? 'COMPLETED',
              }
            : {}),
          ...(disposition ? { hs_call_disposition: disposition } : {}),
          // HubSpot plays .mp3/.wav URLs on the record; Cadenza's is a page a signed-in member opens,
          // so it shows as a link (what HubSpot shows for a page URL is unverified).
          ...(c?.recordingUrl ? { hs_call_recording_url: c.recordingUrl } : {}),
        },
      };
    }
    case 'task_completed':
      return { type: 'tasks', properties: { ...base, hs_task_subject: a.title, hs_task_body: html(a.body), hs_task_status: 'COMPLETED' } };
    default: {
      const automatic = a.automatic ? 'Automatic: an image proxy or a security scanner fetched the email, not a person.\n\n' : '';
      return { type: 'notes', properties: { ...base, hs_note_body: html(`${a.title}\n\n${automatic}${a.body}`) } };
    }
  }
}

/** Note, call and task bodies are rich text in HubSpot: the text escaped, its line breaks kept. */
function html(text: string): string {
  return cap(escapeHtml(text.trim()).replace(/\r?\n/g, '<br>'));
}

function cap(s: string): string {
  return s.length <= maxText ? s : `${s.slice(0, maxText - 1)}…`;
}

/** ISO 8601 in UTC, as documented for hs_timestamp; an unreadable stamp is sent as it is, for HubSpot to refuse. */
function timestamp(occurredAt: string): string {
  const t = Date.parse(occurredAt);
  return Number.isNaN(t) ? occurredAt : new Date(t).toISOString();
}

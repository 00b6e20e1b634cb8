import type { CrmActivity } from '../connector.ts';

/**
 * Which Task each Cadenza activity becomes (Object Reference, "Task"): one completed Task per
 * activity, on the Contact or Lead with the prospect's address (WhoId), keyed by the custom
 * external-id field Cadenza_Activity_Id__c so that an upsert retried after a lost answer finds the
 * record instead of writing a second one.
 *
 *   email_sent, email_replied   TaskSubtype Email
 *   call                        TaskSubtype Call, CallType Inbound/Outbound, CallDurationInSeconds,
 *                               CallDisposition (the outcome); recording link and transcript in Description
 *   everything else             TaskSubtype Task
 *
 * Status is "Completed", a value of the default Task Status picklist (an org may rename it; then
 * Salesforce refuses the record and it is `rejected` with that reason). ActivityDate is the UTC date
 * of the fact: the field is a date without a zone.
 */
export const ACTIVITY_ID_FIELD = 'Cadenza_Activity_Id__c';

/** Object Reference lengths: Subject 255, Description 32,000, CallDisposition 255. */
const maxSubject = 255;
const maxDescription = 32_000;

export function taskFor(a: CrmActivity, whoId: string): Record<string, unknown> {
  const base: Record<string, unknown> = {
    attributes: { type: 'Task' },
    [ACTIVITY_ID_FIELD]: a.externalId,
    WhoId: whoId,
    Subject: cap(a.title, maxSubject),
    Status: 'Completed',
    ActivityDate: utcDate(a.occurredAt),
  };
  switch (a.kind) {
    case 'email_sent':
    case 'email_replied': {
      const intent = a.kind === 'email_replied' && a.replyIntent ? `\n\nClassified by Cadenza as: ${a.replyIntent}` : '';
      return { ...base, TaskSubtype: 'Email', Description: cap(a.body + intent, maxDescription) };
    }
    case 'call': {
      const c = a.call;
      const lines = [a.body, c ? `Outcome: ${c.outcome}` : '', c?.recordingUrl ? `Recording: ${c.recordingUrl}` : '', c?.transcript ? `Transcript:\n${c.transcript}` : ''];
      return {
        ...base,
        TaskSubtype: 'Call',
        Description: cap(lines.filter((l) => l !== '').join('\n\n'), maxDescription),
        ...(c ? { CallType: c.direction === 'inbound' ? 'Inbound' : 'Outbound', CallDurationInSeconds: Math.max(0, Math.round(c.durationSeconds)), CallDisposition: cap(c.outcome, 255) } : {}),
      };
    }
    default: {
      const automatic = a.automatic ? 'Automatic: an image proxy or a security scanner fetched the email, not a person.\n\n' : '';
      return { ...base, TaskSubtype: 'Task', Description: cap(automatic + a.body, maxDescription) };
    }
  }
}

function cap(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

/** The fact's date in UTC (the connector has refused an unreadable stamp before this). */
function utcDate(occurredAt: string): string {
  return new Date(Date.parse(occurredAt)).toISOString().slice(0, 10);
}

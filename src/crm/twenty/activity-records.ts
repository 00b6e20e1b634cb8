import type { CrmActivity } from '../connector.ts';
import { labelled, markdownText } from './markdown.ts';

/**
 * What one Cadenza activity becomes in Twenty. Twenty has no email or call engagement objects:
 * a person's timeline shows its notes and tasks (attached through noteTargets / taskTargets), so
 * every activity is one of those.
 *
 *   call, task_completed  → a task, status DONE, dueAt = when it happened. A call or a completed
 *                           task is work a rep did: as a DONE task it sits in the person's Tasks
 *                           tab and the rep's task lists with its date as a field (a note has no
 *                           date but its creation time, which is when Cadenza wrote it, and no
 *                           status).
 *   the email facts       → a note: a record of what happened, with no status to keep.
 *
 * Both carry the title, the body as Markdown (bodyV2.markdown; Twenty derives what BlockNote
 * shows, unverified for the REST path), and `cadenzaActivityId`, the custom field prepare()
 * creates, holding the activity's externalId so that a retry finds the record. When it happened
 * is in the body of a note (and of a task, beside dueAt), in UTC as given.
 */
export type ActivityObject = 'notes' | 'tasks';

export const externalIdField = 'cadenzaActivityId';

export function objectFor(a: CrmActivity): ActivityObject {
  return a.kind === 'call' || a.kind === 'task_completed' ? 'tasks' : 'notes';
}

export function activityInput(a: CrmActivity): Record<string, unknown> {
  const common = { title: title(a), bodyV2: { markdown: body(a) }, [externalIdField]: a.externalId };
  return objectFor(a) === 'tasks' ? { ...common, status: 'DONE', dueAt: a.occurredAt } : common;
}

function title(a: CrmActivity): string {
  return a.automatic ? `${a.title} (automatic)` : a.title;
}

function body(a: CrmActivity): string {
  const parts: string[] = [];
  if (a.automatic) parts.push('_Opened automatically by an image proxy or a security scanner, not by a person._');
  if (a.body.trim() !== '') parts.push(markdownText(a.body));
  const facts = [labelled('When', a.occurredAt)];
  if (a.replyIntent) facts.push(labelled('Reply intent', a.replyIntent));
  if (a.call) {
    const c = a.call;
    facts.push(labelled('Call', `${c.direction}, ${c.outcome}, ${duration(c.durationSeconds)}`));
    if (c.recordingUrl) facts.push(`**Recording:** [listen in Cadenza](<${c.recordingUrl.replace(/[<>\s]/g, encodeURIComponent)}>)`);
  }
  parts.push(facts.join('\\\n'));
  if (a.call?.transcript) parts.push(`**Transcript:**\n\n${markdownText(a.call.transcript)}`);
  return parts.join('\n\n');
}

function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

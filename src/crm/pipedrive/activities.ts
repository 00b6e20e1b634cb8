import type { CrmActivity } from '../connector.ts';

/**
 * What one Cadenza activity becomes in Pipedrive: one activity (API v2), done, attached to the
 * person as its primary participant, dated when the fact happened (due_date / due_time in UTC),
 * owned by the token's user.
 *
 *   call            type 'call', duration HH:MM (Pipedrive's precision: minutes, rounded), the
 *                   exact duration, direction and outcome, the recording link and the transcript
 *                   in the note
 *   task_completed  type 'task'
 *   every email fact, unsubscribes included   type 'email' (the default types a company starts with)
 *
 * Where the externalId lives: Pipedrive activities take no custom field a client can create
 * through the API (the documentation found lists GET /api/v2/activityFields, not a way to add
 * one), and a POST has no idempotency key. So the note ends with a marker line,
 * "Cadenza activity id: <externalId>", which Pipedrive keeps (the note is the activity's own
 * HTML text) and which the connector reads back to find what an earlier call wrote. Its limits:
 * a user who edits the note and removes the line makes a retry of that same fact write it again;
 * and the marker shows to users (it reads as a reference, which is what it is).
 */
export type PipedriveActivityType = 'email' | 'call' | 'task';

const markerLabel = 'Cadenza activity id:';
/** The externalId alphabet (connector.ts: at most 100 of [A-Za-z0-9:._-]), so the marker needs no escaping. */
const markerRe = /Cadenza activity id: ([A-Za-z0-9:._-]{1,100})/;

export function activityType(a: CrmActivity): PipedriveActivityType {
  if (a.kind === 'call') return 'call';
  if (a.kind === 'task_completed') return 'task';
  return 'email';
}

/** The body of POST /api/v2/activities for `a`, attached to `personId`. */
export function activityBody(a: CrmActivity, personId: number): Record<string, unknown> {
  const at = new Date(a.occurredAt);
  if (Number.isNaN(at.getTime())) throw new RangeError(`occurredAt is not an instant: ${a.occurredAt}`);
  const iso = at.toISOString();
  return {
    subject: (a.automatic ? `${a.title} (automatic)` : a.title).slice(0, 255),
    type: activityType(a),
    done: true,
    due_date: iso.slice(0, 10),
    due_time: iso.slice(11, 16),
    ...(a.call ? { duration: hhmm(a.call.durationSeconds) } : {}),
    note: note(a),
    participants: [{ person_id: personId, primary: true }],
  };
}

/** The externalId an activity's note carries, if any. */
export function markerOf(note: unknown): string | null {
  return typeof note === 'string' ? (markerRe.exec(note)?.[1] ?? null) : null;
}

function note(a: CrmActivity): string {
  const parts: string[] = [];
  if (a.automatic) parts.push('Opened automatically by an image proxy or a security scanner, not by a person.');
  if (a.body.trim() !== '') parts.push(html(a.body));
  if (a.replyIntent) parts.push(`Reply classified by Cadenza as: ${html(a.replyIntent)}`);
  if (a.call) {
    const c = a.call;
    parts.push(`Call: ${c.direction}, outcome ${html(c.outcome)}, ${seconds(c.durationSeconds)}`);
    if (c.recordingUrl) parts.push(`Recording: <a href="${attr(c.recordingUrl)}">${html(c.recordingUrl)}</a>`);
    if (c.transcript) parts.push(`Transcript:<br>${html(c.transcript)}`);
  }
  parts.push(`${markerLabel} ${a.externalId}`);
  return parts.map((p) => `<p>${p}</p>`).join('');
}

function html(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r?\n/g, '<br>');
}

function attr(s: string): string {
  return html(s).replace(/"/g, '&quot;');
}

function hhmm(totalSeconds: number): string {
  const m = Math.max(0, Math.round(totalSeconds / 60));
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

function seconds(total: number): string {
  const s = Math.max(0, Math.round(total));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import { checkEmail } from '../leads/email.ts';
import type { Applied, EnrollmentService } from '../sequence/enrollment-service.ts';
import { isTerminal } from '../sequence/model.ts';
import { suppress } from '../sequence/suppress.ts';
import type { Store, Tx } from '../store/store.ts';
import { insertTrackingEvents } from './sql/insert-tracking-events.ts';

/**
 * Honours an unsubscribe, whichever way it came: the one-click POST (RFC 8058), the confirmation
 * page's button, or a mail to the List-Unsubscribe mailto: address (ingest/ calls this).
 *
 * One opt-out is everywhere (promise 6): the address is suppressed in the whole workspace and every
 * live enrollment of the lead stops, by sequence/suppress.ts suppress(), in one transaction. The
 * engine calls it when it applies `{ type: 'unsubscribe' }` to an enrollment of the lead (its
 * suppress effect); when the address has no enrollment (a lead never enrolled, or no lead at all:
 * a mailto from an address we only imported, or will import later), this calls it directly.
 * Written before answering, not batched: it is rare and must not be lost.
 *
 * Idempotent: a second unsubscribe of an address already suppressed, with nothing live left to
 * stop, writes nothing and reports 'already'.
 */
export interface UnsubscribeDeps {
  store: Store;
  service: EnrollmentService;
  clock: Clock;
}

export interface UnsubscribeRequest {
  workspaceId: string;
  /** The send whose link or mail carried the request (the token's sr, or the message it replied to). */
  sendRequestId?: string | undefined;
  /** The address, when no send is known (a mailto: from a forwarded message, a CSV of opt-outs). */
  email?: string | undefined;
  /** How it came: 'one_click', 'page', 'mailto', …; kept with the journal event and the suppression. */
  source: string;
}

export type UnsubscribeResult =
  /** Suppressed now; `stopped` lists the enrollments this stopped (the send's own first, if live). */
  | { outcome: 'unsubscribed'; emailNorm: string; stopped: string[] }
  /** Already suppressed with nothing live: nothing was written. */
  | { outcome: 'already'; emailNorm: string }
  /** Neither the send nor the address could be resolved (the send was deleted, and no email given). */
  | { outcome: 'not_found' };

interface Target {
  emailNorm: string;
  leadId: string | null;
  /** The send's enrollment (any state): the engine is told about this one first. */
  enrollmentId: string | null;
  sendRequestId: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function honourUnsubscribe(deps: UnsubscribeDeps, req: UnsubscribeRequest): Promise<UnsubscribeResult> {
  if (!UUID.test(req.workspaceId)) throw cadenzaError('INVALID_INPUT', 'workspaceId must be a uuid', { workspaceId: req.workspaceId });
  if (req.sendRequestId !== undefined && !UUID.test(req.sendRequestId)) throw cadenzaError('INVALID_INPUT', 'sendRequestId must be a uuid', { sendRequestId: req.sendRequestId });
  if (req.sendRequestId === undefined && req.email === undefined) throw cadenzaError('INVALID_INPUT', 'an unsubscribe needs a sendRequestId or an email');
  let emailNorm: string | undefined;
  if (req.email !== undefined) {
    const c = checkEmail(req.email);
    if (!c.ok) throw cadenzaError('INVALID_INPUT', `cannot unsubscribe ${JSON.stringify(req.email.slice(0, 320))}: ${c.message}`, { email: req.email.slice(0, 320) });
    emailNorm = c.norm;
  }
  const source = req.source.slice(0, 200) || 'unsubscribe';
  const now = deps.clock.now();

  let applied: Applied[] = [];
  const result = await deps.store.db.transaction().execute(async (tx): Promise<UnsubscribeResult> => {
    const target = await resolve(tx, req.workspaceId, req.sendRequestId, emailNorm);
    if (!target) return { outcome: 'not_found' };
    const live = target.leadId ? await liveEnrollments(tx, target.leadId) : [];
    if (live.length === 0 && (await isSuppressed(tx, req.workspaceId, target.emailNorm))) return { outcome: 'already', emailNorm: target.emailNorm };

    // The send's own enrollment first (so its state says 'unsubscribed' even if it had finished),
    // else any live one; the engine stops the others in the same transaction.
    const first = target.enrollmentId ?? live[0] ?? null;
    if (first) applied = await deps.service.applyInTx(tx, first, { type: 'unsubscribe', source }, now);
    // The engine has suppressed the address through suppress() if there was an enrollment; with
    // none (or to be sure), suppress() itself: it keeps the first reason and finds nothing left to stop.
    applied.push(...(await suppress(tx, deps.service, req.workspaceId, [{ email: target.emailNorm, reason: 'unsubscribe', source }], { now, ...(first ? { spare: [first] } : {}) })).applied);
    await insertTrackingEvents(tx, [
      {
        workspaceId: req.workspaceId,
        sendRequestId: target.sendRequestId,
        kind: 'unsubscribe',
        url: null,
        linkIndex: null,
        method: null,
        userAgent: null,
        ip: null,
        delayMs: null,
        verdict: null,
        confidence: null,
        reason: source,
        at: now,
      },
    ]);
    const stopped = applied.filter((a) => a.result.outcome === 'applied' && isTerminal(a.result.next.state) && live.includes(a.enrollmentId)).map((a) => a.enrollmentId);
    return { outcome: 'unsubscribed', emailNorm: target.emailNorm, stopped };
  });
  // Tell the scheduler about the timers the stops cleared, only once they are committed.
  deps.service.notify(applied);
  return result;
}

async function resolve(tx: Tx, workspaceId: string, sendRequestId: string | undefined, emailNorm: string | undefined): Promise<Target | null> {
  if (sendRequestId) {
    const r = await sql<{ enrollment_id: string; lead_id: string; email_norm: string }>`
      select r.enrollment_id, e.lead_id, l.email_norm
        from send_request r
        join enrollment e on e.id = r.enrollment_id
        join lead l on l.id = e.lead_id
       where r.id = ${sendRequestId} and r.workspace_id = ${workspaceId}`.execute(tx);
    const row = r.rows[0];
    // The send's own address wins over a given email: the link was made for that recipient.
    if (row) return { emailNorm: row.email_norm, leadId: row.lead_id, enrollmentId: row.enrollment_id, sendRequestId };
  }
  if (!emailNorm) return null;
  // A token can outlive its workspace; there is then nothing to suppress in.
  if (!(await tx.selectFrom('workspace').select('id').where('id', '=', workspaceId).executeTakeFirst())) return null;
  const lead = await tx.selectFrom('lead').select('id').where('workspace_id', '=', workspaceId).where('email_norm', '=', emailNorm).executeTakeFirst();
  return { emailNorm, leadId: lead?.id ?? null, enrollmentId: null, sendRequestId: null };
}

async function liveEnrollments(tx: Tx, leadId: string): Promise<string[]> {
  const rows = await tx.selectFrom('enrollment').select('id').where('lead_id', '=', leadId).where('state', 'in', ['active', 'paused']).orderBy('id').execute();
  return rows.map((r) => r.id);
}

async function isSuppressed(tx: Tx, workspaceId: string, emailNorm: string): Promise<boolean> {
  const r = await tx.selectFrom('suppression').select('email_norm').where('workspace_id', '=', workspaceId).where('email_norm', '=', emailNorm).executeTakeFirst();
  return r !== undefined;
}

import { z } from 'zod';
import { cadenzaError, type ErrorCode } from '../../common/errors.ts';
import type { EngineEvent } from '../../sequence/model.ts';
import { moveEnrollment, moveEnrollments, type MoveRefusal } from '../../sequence/move.ts';
import { moveOffRemovedMailbox } from '../../sending/mailbox-removal.ts';
import { blockedOf, findEnrollment, findEnrollmentSend, listEnrollments, listEnrollmentSends, type EnrollmentRow, type EnrollmentSendRow } from '../../sequence/enrollment-query.ts';
import { resendByHand } from '../../sending/outbox.ts';
import { enrollmentService, type ApiContext } from '../context.ts';
import { decodeCursor, page, pageQuery } from '../http/pagination.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

const state = z.enum(['active', 'paused', 'replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'failed', 'moved']);
const enrollment = z
  .object({
    id: z.uuid(),
    sequenceId: z.uuid(),
    sequenceName: z.string(),
    leadId: z.uuid(),
    leadEmail: z.string(),
    mailboxId: z.uuid().nullable(),
    state,
    stateReason: z.string().nullable(),
    movedTo: z.uuid().nullable().describe("When moved: the enrollment that replaced this one, in the target sequence"),
    waitingFor: z.enum(['timer', 'send', 'task']).nullable(),
    nextStepKey: z.string().nullable(),
    dueAt: z.iso.datetime().nullable().describe('When the next step is due (active) or the pause ends (paused)'),
    timeZone: z.string(),
    createdAt: z.iso.datetime(),
    blocked: z
      .object({
        code: z.enum(['no_mailbox', 'mailbox_paused', 'mailbox_removed', 'sending_fails', 'mailbox_not_verified', 'needs_review', 'overdue']),
        reason: z.string().describe('What is wrong, in plain words'),
        action: z.string().describe('What to do about it'),
        detail: z.string().nullable().describe("The technical detail (a server's answer)"),
      })
      .nullable()
      .describe('Why the enrollment cannot progress until a person acts (src/sequence/blocked.ts); null when it can'),
  })
  .meta({ id: 'Enrollment' });

const toEnrollment = (r: EnrollmentRow, now: number): z.output<typeof enrollment> => ({
  id: r.id, sequenceId: r.sequence_id, sequenceName: r.sequence_name, leadId: r.lead_id, leadEmail: r.lead_email, mailboxId: r.mailbox_id,
  state: r.state, stateReason: r.state_reason, movedTo: r.moved_to, waitingFor: r.waiting_for, nextStepKey: r.next_step_key,
  dueAt: r.due_at?.toISOString() ?? null, timeZone: r.time_zone, createdAt: r.created_at.toISOString(), blocked: blockedOf(r, now),
});

/** Applies a person's event through the engine; an event the state refuses is a 409 with the engine's note. */
async function act(ctx: ApiContext, workspaceId: string, enrollmentId: string, event: EngineEvent): Promise<z.output<typeof enrollment>> {
  const found = await findEnrollment(ctx.store.db, workspaceId, enrollmentId);
  if (!found) throw cadenzaError('NOT_FOUND', 'no such enrollment in this workspace');
  const r = await enrollmentService(ctx).apply(enrollmentId, event);
  if (r.outcome === 'ignored') throw cadenzaError('INVALID_TRANSITION', `cannot ${event.type} an enrollment that is ${found.state}${r.note ? `: ${r.note}` : ''}`, { state: found.state });
  // A timer set (a resume): a scheduler in another process would only see it at its next refill.
  if (r.next.dueAt !== null) ctx.workDue?.();
  return toEnrollment((await findEnrollment(ctx.store.db, workspaceId, enrollmentId))!, ctx.clock.now());
}

const one = workspaceParams({ enrollmentId: z.uuid() });

const sendState = z.enum(['queued', 'in_flight', 'sent', 'failed', 'cancelled', 'unknown', 'possibly_sent']);
const send = z
  .object({
    id: z.uuid(),
    stepId: z.uuid(),
    stepKey: z.string(),
    state: sendState.describe(
      "possibly_sent: the send may have gone out and nothing can prove it did not (the process stopped after handing it over, and the Sent folder's copy is still pending): the sequence went on as if it were sent, and it is never sent again unless a person asks (POST …/sends/{sendId}/resend)",
    ),
    messageId: z.string().nullable(),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    manualResend: z.boolean().describe('A resend asked for by hand'),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'EnrollmentSend' });

const toSend = (r: EnrollmentSendRow): z.output<typeof send> => ({
  id: r.id, stepId: r.step_id, stepKey: r.step_key, state: r.state, messageId: r.message_id, attempts: r.attempts, lastError: r.last_error,
  manualResend: r.manual_resend, updatedAt: r.updated_at.toISOString(),
});

const moveTarget = {
  sequenceId: z.uuid().describe('The sequence to move to: in the same workspace, and active'),
  startAtStep: z.string().min(1).max(64).optional().describe("Key of the step to start at (default the first); the steps before it are skipped. Its delay counts from the move, as a first step's does"),
};

const refusal = z.enum(['not_found', 'not_live', 'same_sequence', 'suppressed', 'already_enrolled', 'sequence_not_active', 'cannot_plan', 'invalid_address', 'held_for_review', 'no_thread']);

/** A single move's refusal as an error: the same reasons a bulk move reports per row. */
const refusalCode: Record<MoveRefusal, ErrorCode> = {
  not_found: 'NOT_FOUND',
  not_live: 'INVALID_TRANSITION',
  same_sequence: 'INVALID_INPUT',
  suppressed: 'SUPPRESSED',
  already_enrolled: 'ALREADY_ENROLLED',
  sequence_not_active: 'CONFLICT',
  cannot_plan: 'CONFLICT',
  invalid_address: 'CONFLICT',
  held_for_review: 'CONFLICT',
  no_thread: 'CONFLICT',
};

const refusalText: Record<MoveRefusal, string> = {
  not_found: 'no such enrollment in this workspace',
  not_live: 'only an active or paused enrollment can be moved',
  same_sequence: 'the enrollment is already in this sequence',
  suppressed: "the lead's address is suppressed",
  already_enrolled: 'the lead is already in the target sequence (a lead is enrolled in a sequence once)',
  sequence_not_active: 'the target sequence is not active; launch it first',
  cannot_plan: "the target sequence's calendar cannot plan this lead",
  invalid_address: "list hygiene found the lead's address undeliverable (or it was rejected on review)",
  held_for_review: "list hygiene found the lead's address risky: approve it in the review queue first",
  no_thread: "the target sequence's first email has no subject and continues the lead's thread with the rep, which this move cannot carry over",
};

const moveDeps = (ctx: ApiContext) => ({ store: ctx.store, clock: ctx.clock, random: ctx.random, service: enrollmentService(ctx) });

export const enrollmentRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/enrollments',
    summary: 'Enrollments, newest first, by sequence, lead or state',
    tags: ['enrollments'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({ ...pageQuery, sequenceId: z.uuid().optional(), leadId: z.uuid().optional(), state: state.optional() }),
    example: () => ({ query: { limit: 10 } }),
    response: z.object({ items: z.array(enrollment), nextCursor: z.string().nullable() }),
    handler: async ({ ctx, ws, query }) => {
      const after = decodeCursor(query.cursor);
      const rows = await listEnrollments(ctx.store.db, ws.workspaceId, { sequenceId: query.sequenceId, leadId: query.leadId, state: query.state, after }, query.limit + 1);
      const p = page(rows, query.limit, (r) => ({ at: r.created_at, id: r.id }));
      return { items: p.items.map((r) => toEnrollment(r, ctx.clock.now())), nextCursor: p.nextCursor };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/enrollments/:enrollmentId',
    summary: 'One enrollment',
    tags: ['enrollments'],
    access: { workspace: 'member' },
    params: one,
    response: enrollment,
    handler: async ({ ctx, ws, params }) => {
      const r = await findEnrollment(ctx.store.db, ws.workspaceId, params.enrollmentId);
      if (!r) throw cadenzaError('NOT_FOUND', 'no such enrollment in this workspace');
      return toEnrollment(r, ctx.clock.now());
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/enrollments/:enrollmentId/pause',
    summary: 'Pause an active enrollment, until a time or until resumed',
    tags: ['enrollments'],
    access: { workspace: 'member' },
    params: one,
    body: z.object({ until: z.iso.datetime().optional(), reason: z.string().max(200).optional() }),
    example: () => ({ body: { reason: 'asked to wait' } }),
    response: enrollment,
    handler: async ({ ctx, ws, params, body }) => {
      const until = body.until ? Date.parse(body.until) : undefined;
      if (until !== undefined && until <= ctx.clock.now()) throw cadenzaError('INVALID_INPUT', 'until must be in the future', { field: 'until' });
      return act(ctx, ws.workspaceId, params.enrollmentId, { type: 'pause', ...(until !== undefined ? { until } : {}), ...(body.reason ? { reason: body.reason } : {}) });
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/enrollments/:enrollmentId/resume',
    summary: 'Resume a paused enrollment now',
    tags: ['enrollments'],
    access: { workspace: 'member' },
    params: one,
    response: enrollment,
    handler: async ({ ctx, ws, params }) => {
      const found = await findEnrollment(ctx.store.db, ws.workspaceId, params.enrollmentId);
      // Paused because its mailbox was removed: resuming goes on from another mailbox of the sequence.
      if (found?.state === 'paused') await moveOffRemovedMailbox(ctx.store.db, params.enrollmentId, ctx.clock.now());
      return act(ctx, ws.workspaceId, params.enrollmentId, { type: 'resume' });
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/enrollments/:enrollmentId/stop',
    summary: 'Stop an enrollment for good: nothing more is sent',
    tags: ['enrollments'],
    access: { workspace: 'member' },
    params: one,
    body: z.object({ reason: z.string().max(200).optional() }),
    example: () => ({ body: { reason: 'talking on the phone now' } }),
    response: enrollment,
    handler: async ({ ctx, ws, params, body }) => act(ctx, ws.workspaceId, params.enrollmentId, { type: 'stop', ...(body.reason ? { reason: body.reason } : {}) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/enrollments/:enrollmentId/move',
    summary: "Move an active or paused enrollment to another sequence: it ends as 'moved' and the lead is enrolled in the target, in one transaction",
    tags: ['enrollments'],
    access: { workspace: 'member' },
    params: one,
    body: z.object(moveTarget).meta({ id: 'MoveEnrollment', examples: [{ sequenceId: '0198c2a4-5b1e-7c3d-9f00-2b6e4d1a7c55' }, { sequenceId: '0198c2a4-5b1e-7c3d-9f00-2b6e4d1a7c55', startAtStep: 'follow-up-2' }] }),
    example: (ids) => ({ body: { sequenceId: ids.sequenceId ?? '00000000-0000-4000-8000-000000000000' } }),
    response: z.object({ from: enrollment, to: enrollment }),
    handler: async ({ ctx, ws, params, body }) => {
      const r = await moveEnrollment(moveDeps(ctx), { workspaceId: ws.workspaceId, enrollmentId: params.enrollmentId, ...body });
      if (r.outcome === 'skipped') throw cadenzaError(refusalCode[r.reason], `cannot move: ${refusalText[r.reason]}${r.detail ? ` (${r.detail})` : ''}`, { reason: r.reason });
      ctx.workDue?.();
      const [from, to] = await Promise.all([r.enrollmentId, r.newEnrollmentId].map((id) => findEnrollment(ctx.store.db, ws.workspaceId, id)));
      return { from: toEnrollment(from!, ctx.clock.now()), to: toEnrollment(to!, ctx.clock.now()) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/enrollments/move',
    summary: 'Move up to 1,000 enrollments to one sequence; each is moved or skipped with a reason',
    tags: ['enrollments'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    body: z
      .object({ enrollmentIds: z.array(z.uuid()).min(1).max(1000), ...moveTarget })
      .meta({ id: 'MoveEnrollments', examples: [{ enrollmentIds: ['0198c2a4-61f0-7a11-8b2e-93c0d4e5f601', '0198c2a4-61f0-7a11-8b2e-93c0d4e5f602'], sequenceId: '0198c2a4-5b1e-7c3d-9f00-2b6e4d1a7c55' }] }),
    example: (ids) => ({ body: { enrollmentIds: [ids.enrollmentId ?? '00000000-0000-4000-8000-000000000000'], sequenceId: ids.sequenceId ?? '00000000-0000-4000-8000-000000000000' } }),
    response: z.object({
      moved: z.number().int(),
      skipped: z.number().int(),
      results: z.array(
        z.object({
          enrollmentId: z.uuid(),
          outcome: z.enum(['moved', 'skipped']),
          newEnrollmentId: z.uuid().optional(),
          reason: refusal.optional(),
          detail: z.string().optional(),
        }),
      ),
    }),
    handler: async ({ ctx, ws, body }) => {
      const results = await moveEnrollments(moveDeps(ctx), { workspaceId: ws.workspaceId, ...body });
      const moved = results.filter((r) => r.outcome === 'moved').length;
      if (moved) ctx.workDue?.();
      return {
        moved,
        skipped: results.length - moved,
        results: results.map((r) =>
          r.outcome === 'moved'
            ? { enrollmentId: r.enrollmentId, outcome: r.outcome, newEnrollmentId: r.newEnrollmentId }
            : { enrollmentId: r.enrollmentId, outcome: r.outcome, reason: r.reason, detail: r.detail ?? refusalText[r.reason] },
        ),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/enrollments/:enrollmentId/sends',
    summary: "The enrollment's sends, one per step that reached the queue, with their state (possibly_sent included)",
    tags: ['enrollments'],
    access: { workspace: 'member' },
    params: one,
    response: z.object({ items: z.array(send) }),
    handler: async ({ ctx, ws, params }) => {
      const found = await findEnrollment(ctx.store.db, ws.workspaceId, params.enrollmentId);
      if (!found) throw cadenzaError('NOT_FOUND', 'no such enrollment in this workspace');
      const rows = await listEnrollmentSends(ctx.store.db, ws.workspaceId, params.enrollmentId, 'queued');
      return { items: rows.map(toSend) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/enrollments/:enrollmentId/sends/:sendId/resend',
    summary: 'Send a possibly-sent step again, by hand, under the same Message-ID (a receiver that got the first copy can drop the second)',
    tags: ['enrollments'],
    access: { workspace: 'member' },
    params: workspaceParams({ enrollmentId: z.uuid(), sendId: z.uuid() }),
    response: send,
    handler: async ({ ctx, ws, params }) => {
      const own = await findEnrollmentSend(ctx.store.db, ws.workspaceId, params.enrollmentId, params.sendId);
      if (!own) throw cadenzaError('NOT_FOUND', 'no such send of this enrollment');
      const r = await resendByHand(ctx, ws.workspaceId, params.sendId);
      if (!r.ok) {
        if (r.reason === 'not_found') throw cadenzaError('NOT_FOUND', 'no such send of this enrollment');
        throw cadenzaError(
          'INVALID_TRANSITION',
          r.reason === 'enrollment_stopped' ? 'the enrollment has stopped (a reply, a bounce, an opt-out or a person): nothing more is sent to this lead' : `only a possibly-sent step can be sent again by hand; this one is ${own.state}`,
          { state: own.state },
        );
      }
      ctx.workDue?.();
      return toSend((await findEnrollmentSend(ctx.store.db, ws.workspaceId, params.enrollmentId, params.sendId))!);
    },
  }),
];

import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { endCauses } from '../../dialer/call-progress.ts';
import { deleteRecording, openRecording } from '../../dialer/recording/ingest.ts';
import { audit } from '../audit/actor.ts';
import { findCall, inboundCall, listCalls, logCallOutcome, reportProgress, startCall, type CallDeps, type CallWithRecording, type PhoneCallRow } from '../../dialer/calls.ts';
import { readTranscript, requeueTranscript } from '../../dialer/transcribe/queue.ts';
import type { CallOutcome } from '../../sequence/model.ts';
import { enrollmentService, type ApiContext } from '../context.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

export const CALL_OUTCOMES = ['connected', 'voicemail', 'no_answer', 'busy', 'wrong_number', 'meeting_booked', 'not_interested'] as const satisfies readonly CallOutcome[];

const callView = z
  .object({
    id: z.uuid(),
    direction: z.enum(['outbound', 'inbound']),
    source: z.enum(['dialer', 'logged']).describe("'logged': dialled elsewhere, outcome logged on the task"),
    state: z.enum(['dialing', 'ringing', 'answered', 'ended']),
    outcome: z.enum([...CALL_OUTCOMES, 'dropped']).nullable().describe("The rep's outcome; 'dropped' when the call ended abnormally"),
    suggested: z.enum(['connected', 'no_answer', 'busy', 'dropped']).nullable().describe('What the end suggests; given as the outcome 30 minutes after the end if nobody gives one'),
    number: z.string().nullable().describe('The remote number, E.164'),
    leadId: z.uuid().nullable(),
    taskId: z.uuid().nullable(),
    enrollmentId: z.uuid().nullable(),
    notes: z.string().nullable(),
    endCause: z.string().nullable(),
    attempt: z.number().int(),
    startedAt: z.string(),
    ringingAt: z.string().nullable(),
    answeredAt: z.string().nullable(),
    endedAt: z.string().nullable(),
    durationMs: z.number().int().nullable().describe('From answer to end'),
    missed: z.boolean().describe('An incoming call that ended without being answered (the caller gave up, or the rep declined)'),
    recording: z
      .object({ durationMs: z.number().int(), bytes: z.number().int(), createdAt: z.string() })
      .nullable()
      .describe('The stored recording (GET …/calls/{callId}/recording plays it), or null'),
    transcript: z
      .object({ state: z.enum(['pending', 'running', 'done', 'failed']), error: z.string().nullable().describe('The last failure, in plain words') })
      .nullable()
      .describe("The recording's transcription (GET …/calls/{callId}/transcript reads it), or null when none was queued"),
  })
  .meta({ id: 'Call' });

const transcriptView = z
  .object({
    state: z.enum(['pending', 'running', 'done', 'failed']).describe('pending: waiting for its (next) attempt; failed: for good, until transcribed again by hand'),
    attempts: z.number().int(),
    nextAttemptAt: z.string().nullable(),
    model: z.string().nullable().describe('The speech model that made it: folder name @ the encoder file\'s SHA-256 prefix'),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    updatedAt: z.string(),
    result: z
      .object({
        words: z.array(z.object({ speaker: z.enum(['rep', 'prospect']), word: z.string(), startMs: z.number(), endMs: z.number() })),
        turns: z.array(z.object({ speaker: z.enum(['rep', 'prospect']), startMs: z.number(), endMs: z.number(), text: z.string() })),
        durationMs: z.number(),
      })
      .nullable()
      .describe('Words with times (from the start of the recording) and speaker turns; only when done'),
  })
  .meta({ id: 'CallTranscript' });

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function toView(c: PhoneCallRow & Partial<Pick<CallWithRecording, 'rec_ms' | 'rec_bytes' | 'rec_at' | 'tr_state' | 'tr_error'>>): z.output<typeof callView> {
  return {
    id: c.id,
    direction: c.direction,
    source: c.source,
    state: c.state,
    outcome: c.outcome,
    suggested: c.suggested,
    number: c.remote_e164,
    leadId: c.lead_id,
    taskId: c.task_id,
    enrollmentId: c.enrollment_id,
    notes: c.notes,
    endCause: c.end_cause,
    attempt: c.attempt,
    startedAt: c.created_at.toISOString(),
    ringingAt: iso(c.ringing_at),
    answeredAt: iso(c.answered_at),
    endedAt: iso(c.ended_at),
    durationMs: c.duration_ms,
    missed: c.direction === 'inbound' && c.state === 'ended' && c.answered_at === null,
    recording: c.rec_ms != null && c.rec_at ? { durationMs: c.rec_ms, bytes: c.rec_bytes ?? 0, createdAt: c.rec_at.toISOString() } : null,
    transcript: c.tr_state ? { state: c.tr_state, error: c.tr_state === 'done' ? null : (c.tr_error ?? null) } : null,
  };
}

function vaultOf(ctx: ApiContext) {
  if (!ctx.vault) throw cadenzaError('CONFIG_INVALID', 'this server has no vault to open recordings with');
  return ctx.vault;
}

function deps(ctx: ApiContext): CallDeps {
  return { store: ctx.store, clock: ctx.clock, random: ctx.random, service: enrollmentService(ctx) };
}

export const callRoutes = [
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/calls',
    summary: "Open the record of a call before dialling: from a call task (its lead) or a lead; refuses a lead with no diallable number, and the lead's night unless allowOutsideHours",
    tags: ['calls'],
    access: { workspace: 'member' },
    status: 201,
    params: workspaceParams({}),
    body: z
      .object({ taskId: z.uuid().optional(), leadId: z.uuid().optional(), allowOutsideHours: z.boolean().default(false) })
      .strict()
      .refine((b) => (b.taskId === undefined) !== (b.leadId === undefined), 'give a taskId or a leadId, not both'),
    example: (ids) => ({ body: { taskId: ids.taskId!, allowOutsideHours: true } }),
    response: z.object({ call: callView }),
    handler: async ({ ctx, ws, body }) => {
      const call = await startCall(deps(ctx), {
        workspaceId: ws.workspaceId,
        userId: ws.userId,
        ...(body.taskId ? { taskId: body.taskId } : {}),
        ...(body.leadId ? { leadId: body.leadId } : {}),
        allowOutsideHours: body.allowOutsideHours,
      });
      return { call: toView(call) };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/calls/:callId/progress',
    summary: "The softphone's report: ringing, answered, alive (every 20 s while on the call) or ended with a cause; a stale or repeated report changes nothing",
    tags: ['calls'],
    access: { workspace: 'member' },
    params: workspaceParams({ callId: z.uuid() }),
    body: z
      .object({
        event: z.enum(['ringing', 'answered', 'alive', 'ended']),
        cause: z.enum(endCauses).optional().describe('Why it ended (required with ended)'),
        sipCallId: z.string().min(1).max(256).optional(),
      })
      .strict()
      .refine((b) => (b.event === 'ended') === (b.cause !== undefined), 'give a cause with ended, and only with ended'),
    example: () => ({ body: { event: 'ringing' as const } }),
    response: z.object({ call: callView, ignored: z.string().nullable() }),
    handler: async ({ ctx, ws, params, body }) => {
      const at = ctx.clock.now();
      const ev = body.event === 'ended' ? { event: 'ended' as const, at, cause: body.cause! } : { event: body.event, at };
      const r = await reportProgress(deps(ctx), ws.workspaceId, params.callId, { ...ev, ...(body.sipCallId ? { sipCallId: body.sipCallId } : {}) });
      return { call: toView(r.call), ignored: r.ignored };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/calls/:callId/outcome',
    summary: "The rep's outcome of a call, once: the call task's enrollment moves on, tries the call again per the step's retry rule, or stops (wrong number, not interested) or finishes (meeting booked)",
    tags: ['calls'],
    access: { workspace: 'member' },
    params: workspaceParams({ callId: z.uuid() }),
    body: z.object({ outcome: z.enum(CALL_OUTCOMES), notes: z.string().max(10_000).optional() }).strict(),
    example: () => ({ body: { outcome: 'no_answer' as const } }),
    response: z.object({
      call: callView,
      task: z.object({ state: z.enum(['open', 'done', 'skipped']), attempt: z.number().int(), retryAt: z.string().nullable() }).nullable().describe("The call task after the outcome: open again with retryAt when the step's retry rule tries again"),
    }),
    handler: async ({ ctx, ws, params, body }) => {
      const r = await logCallOutcome(deps(ctx), ws.workspaceId, params.callId, body.outcome, body.notes?.trim() ? body.notes : null);
      return { call: toView(r.call), task: r.task ? { state: r.task.state, attempt: r.task.attempt, retryAt: iso(r.task.retryAt) } : null };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/calls/inbound',
    summary: "An incoming call, as the softphone sees it ring: its record, and the leads the caller's number matches (the first the best guess)",
    tags: ['calls'],
    access: { workspace: 'member' },
    status: 201,
    params: workspaceParams({}),
    body: z.object({ from: z.string().min(1).max(100).describe("The caller's number as the trunk gives it") }).strict(),
    example: () => ({ body: { from: '+14155550123' } }),
    response: z.object({
      call: callView,
      caller: z.object({ e164: z.string().nullable(), reason: z.string().nullable() }),
      leads: z.array(z.object({ id: z.uuid(), email: z.string(), name: z.string().nullable(), company: z.string().nullable() })),
      more: z.boolean(),
    }),
    handler: async ({ ctx, ws, body }) => {
      const { call, match } = await inboundCall(deps(ctx), ws.workspaceId, body.from, ws.userId);
      return {
        call: toView(call),
        caller: { e164: match.caller.e164, reason: match.caller.status === 'flagged' ? match.caller.reason : null },
        leads: match.leads.map((l) => ({ id: l.id, email: l.email, name: [l.first_name, l.last_name].filter(Boolean).join(' ') || null, company: l.company })),
        more: match.more,
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/calls',
    summary: "Calls, newest first: the workspace's, or one lead's",
    tags: ['calls'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    query: z.object({ leadId: z.uuid().optional(), limit: z.coerce.number().int().min(1).max(500).default(100) }),
    example: (ids) => ({ query: { leadId: ids.leadId! } }),
    response: z.object({ calls: z.array(callView) }),
    handler: async ({ ctx, ws, query }) => {
      return { calls: (await listCalls(ctx.store.db, ws.workspaceId, query.leadId, query.limit)).map(toView) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/calls/:callId',
    summary: 'One call',
    tags: ['calls'],
    access: { workspace: 'member' },
    params: workspaceParams({ callId: z.uuid() }),
    response: z.object({ call: callView }),
    handler: async ({ ctx, ws, params }) => {
      const c = await findCall(ctx.store.db, ws.workspaceId, params.callId);
      if (!c) throw cadenzaError('NOT_FOUND', 'no such call');
      return { call: toView(c) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/calls/:callId/recording',
    summary: "The call's recording, a 2-channel 8 kHz WAV (channel 1 the rep, channel 2 the prospect), opened from its sealed copy; 404 when it has none",
    tags: ['calls'],
    access: { workspace: 'member' },
    params: workspaceParams({ callId: z.uuid() }),
    response: z.string().describe('audio/wav'),
    handler: async (c) => {
      const { ctx, ws, params, reply } = c;
      const wav = await openRecording(ctx.store, vaultOf(ctx), ws.workspaceId, params.callId);
      if (!wav) throw cadenzaError('NOT_FOUND', 'this call has no recording');
      // Who listened to which call is personal data too: each play is in the audit log.
      await audit(c, { action: 'recording.played', target: `call:${params.callId}`, detail: {} });
      reply.type('audio/wav').header('cache-control', 'private, no-store');
      // A Buffer goes out as is (Fastify serialises only objects); the schema names what it is.
      return wav as unknown as string;
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/calls/:callId/recording',
    summary: "Delete the call's recording (admin); the call's record stays",
    tags: ['calls'],
    access: { workspace: 'admin' },
    params: workspaceParams({ callId: z.uuid() }),
    response: z.object({ deleted: z.literal(true) }),
    handler: async (c) => {
      if (!(await deleteRecording(c.ctx.store, c.ws.workspaceId, c.params.callId))) throw cadenzaError('NOT_FOUND', 'this call has no recording');
      await audit(c, { action: 'recording.deleted', target: `call:${c.params.callId}`, detail: {} });
      return { deleted: true as const };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/calls/:callId/transcript',
    summary: "The recording's transcript: its state, and when done the words with times and the speaker turns (opened from the sealed copy); 404 when none was queued",
    tags: ['calls'],
    access: { workspace: 'member' },
    params: workspaceParams({ callId: z.uuid() }),
    response: z.object({ transcript: transcriptView }),
    handler: async (c) => {
      const { ctx, ws, params } = c;
      const t = await readTranscript(ctx.store.db, vaultOf(ctx), ws.workspaceId, params.callId);
      if (!t) throw cadenzaError('NOT_FOUND', "this call's recording has no transcript");
      // What was said on a call is read as a recording is played: each read is in the audit log.
      if (t.result) await audit(c, { action: 'transcript.read', target: `call:${params.callId}`, detail: {} });
      return { transcript: t };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/calls/:callId/transcript',
    summary: "Transcribe the call's recording (again): a failed transcript is tried anew, a done one redone (with the model now configured); one in progress is left to finish. 404 without a recording; CONFLICT where this server does not transcribe",
    tags: ['calls'],
    access: { workspace: 'member' },
    status: 202,
    params: workspaceParams({ callId: z.uuid() }),
    response: z.object({ queued: z.literal(true) }),
    handler: async (c) => {
      const { ctx, ws, params } = c;
      const r = await requeueTranscript(ctx.store.db, ws.workspaceId, params.callId, ctx.clock.now(), ctx.transcripts !== undefined);
      if (r === 'no_recording') throw cadenzaError('NOT_FOUND', 'this call has no recording');
      if (r === 'not_transcribing') throw cadenzaError('CONFLICT', 'this server does not transcribe calls (CADENZA_TRANSCRIPTION_MODEL is not set)');
      await audit(c, { action: 'transcript.requested', target: `call:${params.callId}`, detail: {} });
      ctx.transcripts?.nudge();
      return { queued: true as const };
    },
  }),
];

/**
 * The transcription queue (migration 0052): a job per recorded call, claimed by one worker at a
 * time, retried with backoff, and at the end either a sealed transcript or a failure in plain words.
 *
 * The call record and its recording are committed first and never wait for the transcript: the
 * job is written in the recording's own transaction (ingest.ts), so a stored recording always has
 * its job, and the worker (worker.ts) takes it from there. Promises kept here:
 *   - one worker per job: the claim locks the row (FOR UPDATE SKIP LOCKED) and gives it a lease;
 *   - a worker that dies mid-job (a 4-hour call, a native abort) is replaced when its lease runs
 *     out, and a job that keeps killing its worker fails after MAX_ATTEMPTS claims instead of
 *     looping, since a claim counts before the work;
 *   - a late result from a worker whose lease was taken over is dropped (the write checks the
 *     lease), so two transcripts never race;
 *   - a bad recording (RECORDING_INVALID) fails at once; anything else is retried, then failed.
 * Pure policy (`afterFailure`, `leaseFor`) is separated from the statements so it is tested with a
 * simulated clock.
 */
import { sql } from 'kysely';
import { CadenzaError } from '../../common/errors.ts';
import type { BytesSealer } from '../../mailbox/vault.ts';
import type { Db, Store, Tx } from '../../store/store.ts';
import type { CallTranscript } from './transcribe.ts';
import type { SpeakerWord, Turn } from './turns.ts';

export const MAX_ATTEMPTS = 4;
/** Waits after the 1st, 2nd and 3rd failed attempt. */
export const RETRY_DELAYS_MS = [60_000, 10 * 60_000, 60 * 60_000] as const;

export const transcriptContext = (callId: string) => `transcript:${callId}`;

export type TranscriptState = 'pending' | 'running' | 'done' | 'failed';

/** What a failed attempt leads to: another attempt at `at`, or the end. */
export type AfterFailure = { next: 'retry'; at: number } | { next: 'failed' };

/** Whether an error can be helped by trying again: a recording that is not transcribable cannot. */
export function isPermanent(e: unknown): boolean {
  return e instanceof CadenzaError && e.code === 'RECORDING_INVALID';
}

export function afterFailure(attempts: number, permanent: boolean, now: number): AfterFailure {
  if (permanent || attempts >= MAX_ATTEMPTS) return { next: 'failed' };
  return { next: 'retry', at: now + RETRY_DELAYS_MS[Math.max(1, Math.min(attempts, RETRY_DELAYS_MS.length)) - 1]! };
}

/**
 * How long a claim holds its job: a quarter of an hour plus twice the call's length, i.e. room to
 * decode both legs at a real-time factor of 1 (the fixture model runs at 0.003, a production
 * Zipformer on one thread at about 0.1-0.2), so a healthy worker never loses a job it is working on.
 */
export function leaseFor(durationMs: number): number {
  return 15 * 60_000 + 2 * durationMs;
}

/** Writes the job of a recording just stored (in its transaction); a second write changes nothing. */
export async function enqueueTranscript(tx: Tx | Db, callId: string, workspaceId: string, now: number): Promise<void> {
  await tx
    .insertInto('call_transcript')
    .values({ call_id: callId, workspace_id: workspaceId, next_attempt_at: new Date(now), created_at: new Date(now), updated_at: new Date(now) })
    .onConflict((oc) => oc.column('call_id').doNothing())
    .execute();
}

/**
 * Puts a call's transcription back in the queue (a failed one to try again, a done one to redo with
 * a new model), attempts from zero; a job already running is left alone (its result comes). The
 * call's recording is looked for first, so another workspace's call is "no recording" whatever
 * this server does.
 */
export async function requeueTranscript(db: Db, workspaceId: string, callId: string, now: number, transcribes: boolean): Promise<'queued' | 'no_recording' | 'not_transcribing'> {
  const rec = await db.selectFrom('phone_call_recording').select('call_id').where('workspace_id', '=', workspaceId).where('call_id', '=', callId).executeTakeFirst();
  if (!rec) return 'no_recording';
  if (!transcribes) return 'not_transcribing';
  await db
    .insertInto('call_transcript')
    .values({ call_id: callId, workspace_id: workspaceId, next_attempt_at: new Date(now), created_at: new Date(now), updated_at: new Date(now) })
    .onConflict((oc) =>
      oc.column('call_id').doUpdateSet({ state: 'pending', attempts: 0, next_attempt_at: new Date(now), lease_owner: null, lease_until: null, transcript: null, word_count: null, error_code: null, error_message: null, updated_at: new Date(now) }).where('call_transcript.state', '!=', 'running'),
    )
    .execute();
  return 'queued';
}

export interface ClaimedJob {
  callId: string;
  workspaceId: string;
  attempts: number;
  durationMs: number;
  leaseUntil: number;
}

/**
 * Fails the jobs whose worker died mid-job MAX_ATTEMPTS times (their lease ran out on the last
 * allowed claim), then claims the next due job: pending and due, or running with its lease run out.
 */
export async function claimTranscript(store: Store, owner: string, now: number): Promise<ClaimedJob | undefined> {
  const at = new Date(now);
  await store.db
    .updateTable('call_transcript')
    .set({ state: 'failed', lease_owner: null, lease_until: null, error_code: 'TRANSCRIBER_STOPPED', error_message: `The transcriber stopped while working on this call ${MAX_ATTEMPTS} times (a crash or a restart); it is not tried again on its own.`, updated_at: at })
    .where('state', '=', 'running')
    .where('lease_until', '<', at)
    .where('attempts', '>=', MAX_ATTEMPTS)
    .execute();
  return store.db.transaction().execute(async (tx) => {
    const due = await sql<{ call_id: string; workspace_id: string; attempts: number; duration_ms: number }>`
      select t.call_id, t.workspace_id, t.attempts, r.duration_ms
        from call_transcript t join phone_call_recording r on r.call_id = t.call_id
       where (t.state = 'pending' and t.next_attempt_at <= ${at}) or (t.state = 'running' and t.lease_until < ${at})
       order by t.next_attempt_at, t.call_id
       limit 1
       for update of t skip locked`.execute(tx);
    const job = due.rows[0];
    if (!job) return undefined;
    const leaseUntil = now + leaseFor(job.duration_ms);
    await tx
      .updateTable('call_transcript')
      .set({ state: 'running', attempts: job.attempts + 1, lease_owner: owner, lease_until: new Date(leaseUntil), updated_at: at })
      .where('call_id', '=', job.call_id)
      .execute();
    return { callId: job.call_id, workspaceId: job.workspace_id, attempts: job.attempts + 1, durationMs: job.duration_ms, leaseUntil };
  });
}

/** The stored form: what the web app shows, without the model's id (a column of its own). */
export interface StoredTranscript {
  words: SpeakerWord[];
  turns: Turn[];
  durationMs: number;
}

/** Stores the result of a claimed job; false when the lease was lost meanwhile (the result is dropped). */
export async function completeTranscript(store: Store, sealer: BytesSealer, job: ClaimedJob, owner: string, t: CallTranscript, now: number): Promise<boolean> {
  const body: StoredTranscript = { words: t.words, turns: t.turns, durationMs: t.durationMs };
  const sealed = await sealer.sealBytes(job.workspaceId, transcriptContext(job.callId), Buffer.from(JSON.stringify(body)));
  const r = await store.db
    .updateTable('call_transcript')
    .set({ state: 'done', transcript: sealed, model: t.model, word_count: t.words.length, lease_owner: null, lease_until: null, error_code: null, error_message: null, updated_at: new Date(now) })
    .where('call_id', '=', job.callId)
    .where('state', '=', 'running')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Records a failed attempt: pending again at the policy's time, or failed. Returns what it did. */
export async function failTranscript(store: Store, job: ClaimedJob, owner: string, e: unknown, now: number): Promise<AfterFailure> {
  const then = afterFailure(job.attempts, isPermanent(e), now);
  const code = e instanceof CadenzaError ? e.code : 'TRANSCRIPTION_FAILED';
  const reason = e instanceof CadenzaError && typeof e.details.reason === 'string' ? ` (${e.details.reason})` : '';
  const message = `${(e as Error)?.message ?? String(e)}${reason}`.slice(0, 500);
  await store.db
    .updateTable('call_transcript')
    .set({
      state: then.next === 'retry' ? 'pending' : 'failed',
      next_attempt_at: new Date(then.next === 'retry' ? then.at : now),
      lease_owner: null,
      lease_until: null,
      error_code: code,
      error_message: message,
      updated_at: new Date(now),
    })
    .where('call_id', '=', job.callId)
    .where('state', '=', 'running')
    .where('lease_owner', '=', owner)
    .execute();
  return then;
}

export interface TranscriptView {
  state: TranscriptState;
  attempts: number;
  /** When a pending job is next tried. */
  nextAttemptAt: string | null;
  model: string | null;
  error: { code: string; message: string } | null;
  updatedAt: string;
  /** Only when done. */
  result: StoredTranscript | null;
}

/** A call's transcript (opened from its sealed copy when done), or undefined when it has no job. */
export async function readTranscript(db: Db, sealer: BytesSealer, workspaceId: string, callId: string): Promise<TranscriptView | undefined> {
  const r = await db.selectFrom('call_transcript').selectAll().where('workspace_id', '=', workspaceId).where('call_id', '=', callId).executeTakeFirst();
  if (!r) return undefined;
  const result = r.transcript ? (JSON.parse((await sealer.openBytes(workspaceId, transcriptContext(callId), r.transcript)).toString('utf8')) as StoredTranscript) : null;
  return {
    state: r.state,
    attempts: r.attempts,
    nextAttemptAt: r.state === 'pending' ? r.next_attempt_at.toISOString() : null,
    model: r.model,
    error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
    updatedAt: r.updated_at.toISOString(),
    result,
  };
}

/** The subject access export's section of call transcripts (src/privacy/export.ts). */
export const TRANSCRIPT_SECTION = 'call_transcripts';

/** The done transcripts of the leads' calls, opened, one row per call, oldest first. */
export async function transcriptsOfLeads(db: Db, sealer: BytesSealer, workspaceId: string, leadIds: string[]): Promise<Array<Record<string, unknown>>> {
  if (leadIds.length === 0) return [];
  const rows = await db
    .selectFrom('call_transcript as t')
    .innerJoin('phone_call as c', 'c.id', 't.call_id')
    .select(['t.call_id', 't.transcript', 't.model', 't.updated_at', 'c.created_at'])
    .where('t.workspace_id', '=', workspaceId)
    .where('c.lead_id', 'in', leadIds)
    .where('t.state', '=', 'done')
    .orderBy('c.created_at')
    .execute();
  const out = [];
  for (const r of rows) {
    const t = JSON.parse((await sealer.openBytes(workspaceId, transcriptContext(r.call_id), r.transcript!)).toString('utf8')) as StoredTranscript;
    out.push({ call_id: r.call_id, call_started_at: r.created_at.toISOString(), model: r.model, transcribed_at: r.updated_at.toISOString(), turns: t.turns.map((x) => ({ speaker: x.speaker, start_ms: x.startMs, end_ms: x.endMs, text: x.text })) });
  }
  return out;
}

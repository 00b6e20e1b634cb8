/**
 * The transcription queue on a real store (both backends) with the real runtime: a recorded call's
 * job is taken by the worker, the recording opened from its sealed copy, decoded by sherpa-onnx and
 * the transcript stored sealed and served by the API; failures are retried on the policy's clock
 * and then shown as failed; a worker that dies is replaced when its lease runs out, and its late
 * result is dropped; a job that keeps killing its worker fails instead of looping.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { cadenzaError } from '../../common/errors.ts';
import type { Vault } from '../../mailbox/vault.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { recordingContext } from '../recording/ingest.ts';
import { loadModel, type LoadedModel } from './model.ts';
import { afterFailure, claimTranscript, completeTranscript, enqueueTranscript, leaseFor, MAX_ATTEMPTS, RETRY_DELAYS_MS } from './queue.ts';
import { espeakAvailable, synthesizeCall } from './synthetic-call.ts';
import { transcribeCall, type CallTranscript } from './transcribe.ts';
import { encodeWav } from './wav.ts';
import { TranscriptionWorker } from './worker.ts';

const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/asr');

describe('the retry policy', () => {
  it('retries after 1 min, 10 min and 1 h, then fails; a bad recording fails at once', () => {
    const now = 1_000_000;
    expect([1, 2, 3].map((a) => afterFailure(a, false, now))).toEqual(RETRY_DELAYS_MS.map((d) => ({ next: 'retry', at: now + d })));
    expect(afterFailure(MAX_ATTEMPTS, false, now)).toEqual({ next: 'failed' });
    expect(afterFailure(1, true, now)).toEqual({ next: 'failed' });
  });
  it('leases a job for a quarter of an hour plus twice the call', () => {
    expect(leaseFor(0)).toBe(15 * 60_000);
    expect(leaseFor(3_600_000)).toBe(15 * 60_000 + 7_200_000);
  });
});

describe.skipIf(!espeakAvailable() && !process.env.CI).each(testBackends())('the transcription queue (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let workspaceId: string;
  let userId: string;
  let dir: string;
  let model: LoadedModel;
  let wav: Uint8Array;
  let n = 0;
  // From the real time: the API in the harness runs on the system clock (a job queued again by hand is
  // due at its 'now'), so the policy clock must not start behind it.
  const clock = new SimClock(Date.now());
  const vault = () => h.ctx.vault as Vault;

  /** A recorded call: the call record, its sealed 2-channel recording, and (as the ingester writes it) its job. */
  async function recordedCall(leadId: string | null = null): Promise<string> {
    const callId = `00000000-0000-4000-8000-0000000001${String(++n).padStart(2, '0')}`;
    await h.store.db.insertInto('phone_call').values({ id: callId, workspace_id: workspaceId, lead_id: leadId, placed_by: userId, direction: 'outbound', source: 'dialer', state: 'ended' }).execute();
    const sealed = await vault().sealBytes(workspaceId, recordingContext(callId), wav);
    await h.store.db.transaction().execute(async (tx) => {
      await tx.insertInto('phone_call_recording').values({ call_id: callId, workspace_id: workspaceId, sealed, duration_ms: 4000, bytes: wav.length, announced: false }).execute();
      await enqueueTranscript(tx, callId, workspaceId, clock.now());
    });
    return callId;
  }
  const worker = (transcribe: (wav: Uint8Array) => Promise<CallTranscript>, owner = 'w1') => new TranscriptionWorker({ store: h.store, clock, sealer: vault(), transcribe, owner });
  const real = (w: Uint8Array) => transcribeCall(model, { kind: 'stereo', wav: w });
  const row = (callId: string) => h.store.db.selectFrom('call_transcript').selectAll().where('call_id', '=', callId).executeTakeFirst();

  beforeAll(async () => {
    h = await apiHarness(backend, { transcripts: { nudge: () => undefined } });
    const w = await seedWorkspace(h.store, 'Transcribe Co', 'owner@asr.test');
    [workspaceId, userId] = [w.workspaceId, w.userId];
    b = await login(h.app, 'owner@asr.test', w.password);
    base = `/api/workspaces/${workspaceId}`;
    // The fixture with the joiner that emits a word every 40 ms (scripts/asr/train.py always_emits):
    // the words then do not depend on how well the test model recognises, and the whole path runs.
    dir = mkdtempSync(join(tmpdir(), 'cadenza-asr-queue-'));
    for (const f of ['encoder.onnx', 'decoder.onnx', 'tokens.txt']) copyFileSync(join(FIXTURE, f), join(dir, f));
    copyFileSync(join(FIXTURE, 'always-emits', 'joiner.onnx'), join(dir, 'joiner.onnx'));
    model = await loadModel({ dir, name: 'queue-test' });
    const call = synthesizeCall(7);
    wav = encodeWav(call.sampleRate, [call.rep, call.prospect]);
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('transcribes a recorded call after the fact and serves the words and turns of both speakers', async () => {
    const callId = await recordedCall();
    // The call is listed at once, its transcript pending: nothing about the call waits for it.
    expect((await b.call('GET', `${base}/calls/${callId}`)).json().call.transcript).toEqual({ state: 'pending', error: null });
    expect((await b.call('GET', `${base}/calls/${callId}/transcript`)).json().transcript).toMatchObject({ state: 'pending', attempts: 0, result: null });
    expect(await worker(real).runOne()).toBe('done');
    const stored = (await row(callId))!;
    expect(stored).toMatchObject({ state: 'done', attempts: 1, lease_owner: null, model: expect.stringMatching(/^queue-test@[0-9a-f]{12}$/) });
    // Sealed: no word of it is readable in the database.
    expect(stored.transcript!.includes(Buffer.from('cadenza'))).toBe(false);
    const got = await b.call('GET', `${base}/calls/${callId}/transcript`);
    expect(got.statusCode, got.body).toBe(200);
    const t = got.json().transcript;
    expect(t).toMatchObject({ state: 'done', error: null, model: stored.model });
    expect(t.result.words.length).toBe(stored.word_count);
    for (const speaker of ['rep', 'prospect']) expect(t.result.words.filter((w: { speaker: string }) => w.speaker === speaker).length).toBeGreaterThan(10);
    expect(t.result.turns.length).toBeGreaterThan(0);
    for (const w of t.result.words) expect(w.endMs).toBeLessThanOrEqual(t.result.durationMs);
    expect((await b.call('GET', `${base}/calls/${callId}`)).json().call.transcript).toEqual({ state: 'done', error: null });
    // Each read of what was said is audited, as each play of the recording is.
    const audit = await h.store.db.selectFrom('audit_event').select(['action', 'target']).where('action', '=', 'transcript.read').execute();
    expect(audit).toContainEqual({ action: 'transcript.read', target: `call:${callId}` });
    expect(await worker(real).runOne()).toBe('idle');
  });

  it('retries a failing transcription on the policy clock, then shows it failed; transcribing again by hand succeeds', async () => {
    const callId = await recordedCall();
    let calls = 0;
    const failing = worker(async () => {
      calls++;
      throw new Error('the runtime ran out of memory');
    });
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      expect(await failing.runOne()).toBe(attempt < MAX_ATTEMPTS ? 'retry' : 'failed');
      // Not due again before its delay.
      expect(await failing.runOne()).toBe('idle');
      if (attempt < MAX_ATTEMPTS) clock.advanceTo(clock.now() + RETRY_DELAYS_MS[attempt - 1]!);
    }
    expect(calls).toBe(MAX_ATTEMPTS);
    const shown = (await b.call('GET', `${base}/calls/${callId}/transcript`)).json().transcript;
    expect(shown).toMatchObject({ state: 'failed', attempts: MAX_ATTEMPTS, error: { code: 'TRANSCRIPTION_FAILED', message: 'the runtime ran out of memory' }, result: null });
    expect((await b.call('GET', `${base}/calls/${callId}`)).json().call.transcript).toEqual({ state: 'failed', error: 'the runtime ran out of memory' });
    const again = await b.call('POST', `${base}/calls/${callId}/transcript`);
    expect(again.statusCode, again.body).toBe(202);
    expect((await row(callId))).toMatchObject({ state: 'pending', attempts: 0, error_code: null });
    expect(await worker(real).runOne()).toBe('done');
  });

  it('fails a recording that cannot be transcribed at once, with its reason', async () => {
    const callId = await recordedCall();
    const bad = worker(async () => {
      throw cadenzaError('RECORDING_INVALID', 'The recording is not a WAV file.', { reason: 'not_wav' });
    });
    expect(await bad.runOne()).toBe('failed');
    expect(await row(callId)).toMatchObject({ state: 'failed', attempts: 1, error_code: 'RECORDING_INVALID', error_message: 'The recording is not a WAV file. (not_wav)' });
  });

  it("takes over a dead worker's job when its lease runs out, and drops the dead worker's late result", async () => {
    const callId = await recordedCall();
    const dead = (await claimTranscript(h.store, 'dead', clock.now()))!;
    expect(dead.callId).toBe(callId);
    expect(await worker(real, 'w2').runOne()).toBe('idle');
    clock.advanceTo(dead.leaseUntil + 1);
    expect(await worker(real, 'w2').runOne()).toBe('done');
    const late: CallTranscript = { words: [], turns: [], durationMs: 4000, model: 'late' };
    expect(await completeTranscript(h.store, vault(), dead, 'dead', late, clock.now())).toBe(false);
    expect(await row(callId)).toMatchObject({ state: 'done', attempts: 2, model: expect.stringMatching(/^queue-test@/) });
  });

  it('fails a job that kept killing its worker instead of claiming it forever', async () => {
    const callId = await recordedCall();
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const j = (await claimTranscript(h.store, `crash-${i}`, clock.now()))!;
      expect(j).toMatchObject({ callId, attempts: i + 1 });
      clock.advanceTo(j.leaseUntil + 1);
    }
    expect(await claimTranscript(h.store, 'next', clock.now())).toBeUndefined();
    expect(await row(callId)).toMatchObject({ state: 'failed', error_code: 'TRANSCRIBER_STOPPED' });
  });

  it("is in the subject access export of the call's lead, opened, by speaker turn", async () => {
    const lead = await b.call('POST', `${base}/leads`, { email: 'ann@prospects.test', firstName: 'Ann' });
    expect(lead.statusCode, lead.body).toBe(201);
    const callId = await recordedCall(lead.json().lead?.id ?? lead.json().id);
    expect(await worker(real).runOne()).toBe('done');
    const x = await b.call('POST', `${base}/privacy/export`, { email: 'ann@prospects.test' });
    expect(x.statusCode, x.body).toBe(200);
    const [t, ...more] = x.json().sections.call_transcripts;
    expect(more).toEqual([]);
    expect(t).toMatchObject({ call_id: callId, model: expect.stringMatching(/^queue-test@/) });
    expect(t.turns.length).toBeGreaterThan(0);
    expect(new Set(t.turns.map((x: { speaker: string }) => x.speaker))).toEqual(new Set(['rep', 'prospect']));
    const csv = await b.call('GET', `${base}/privacy/export?email=ann%40prospects.test&format=csv&section=call_transcripts`);
    expect(csv.body.split(/\r?\n/)[0]).toBe('call_id,call_started_at,model,transcribed_at,turns');
    // The recording is listed, never its sealed bytes, with where its audio is downloaded from; that address plays it.
    const [r, ...others] = x.json().sections.call_recordings;
    expect(others).toEqual([]);
    expect(r).toEqual({ call_id: callId, duration_ms: 4000, bytes: wav.length, announced: false, created_at: expect.any(String), audio: `${base}/calls/${callId}/recording` });
    const audio = await b.call('GET', r.audio);
    expect(audio.statusCode).toBe(200);
    expect(audio.rawPayload.subarray(0, 4).toString()).toBe('RIFF');
  });

  it('goes with its recording: deleting the recording deletes the transcript', async () => {
    const callId = await recordedCall();
    expect(await worker(real).runOne()).toBe('done');
    expect((await b.call('DELETE', `${base}/calls/${callId}/recording`)).statusCode).toBe(200);
    expect(await row(callId)).toBeUndefined();
    expect((await b.call('GET', `${base}/calls/${callId}/transcript`)).statusCode).toBe(404);
    expect((await b.call('POST', `${base}/calls/${callId}/transcript`)).statusCode).toBe(404);
  });
});

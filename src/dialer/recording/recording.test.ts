import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import type { Vault } from '../../mailbox/vault.ts';
import { parseWav } from '../transcribe/wav.ts';
import { writeCapture } from './capture-fixture.ts';
import { ingestRecordings, purgeRecordings } from './ingest.ts';

/**
 * The ingester on a real store and the recording routes: a capture in rtpengine's spool becomes the
 * call's sealed recording, played back as a 2-channel WAV; a capture whose rep is not the call's, or
 * from a workspace that does not record, is quarantined and its files deleted.
 */
describe.each(testBackends())('call recordings (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let workspaceId: string;
  let userId: string;
  let spool: string;
  let n = 0;
  const ingest = (graceMs = 0) => ingestRecordings({ store: h.store, clock: systemClock, sealer: h.ctx.vault as Vault, spoolDir: spool, announcement: new Float32Array(4000).fill(0.3) }, { graceMs });

  /** A call record and, in the spool, its capture as rtpengine leaves it when the call ends. */
  async function recordedCall(rep: string): Promise<{ callId: string; sipCallId: string }> {
    const sipCallId = `call-${++n}@browser.invalid`;
    const callId = `00000000-0000-4000-8000-0000000000${String(n).padStart(2, '0')}`;
    await h.store.db.insertInto('phone_call').values({ id: callId, workspace_id: workspaceId, placed_by: userId, direction: 'outbound', source: 'dialer', state: 'ended', sip_call_id: sipCallId }).execute();
    writeCapture(spool, sipCallId, rep, n);
    return { callId, sipCallId };
  }
  const spoolFiles = () => [...readdirSync(join(spool, 'pcaps')), ...readdirSync(join(spool, 'metadata'))];

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Rec Co', 'owner@rec.test');
    [workspaceId, userId] = [w.workspaceId, w.userId];
    b = await login(h.app, 'owner@rec.test', w.password);
    base = `/api/workspaces/${workspaceId}`;
    spool = mkdtempSync(join(tmpdir(), 'cadenza-rec-'));
    mkdirSync(join(spool, 'pcaps'));
    mkdirSync(join(spool, 'metadata'));
  });
  afterAll(async () => {
    await h?.close();
    rmSync(spool, { recursive: true, force: true });
  });

  it('is off by default; a capture from a workspace that does not record is quarantined and deleted, not stored', async () => {
    expect((await b.call('GET', `${base}/settings`)).json()).toMatchObject({ callRecording: false, callRecordingRetentionDays: 90 });
    const { sipCallId } = await recordedCall(userId);
    const r = await ingest();
    expect(r).toEqual({ stored: [], quarantined: [{ sipCallId, reason: 'metadata' }], waiting: 0 });
    expect(spoolFiles()).toEqual([]);
    expect(await h.store.db.selectFrom('phone_call_recording').select('call_id').execute()).toEqual([]);
  });

  it('stores the call sealed, plays it back as a 2-channel WAV with the announcement, and deletes it on request', async () => {
    const patched = await b.call('PATCH', `${base}/settings`, { callRecording: true, callRecordingRetentionDays: 30 });
    expect(patched.json(), patched.body).toMatchObject({ callRecording: true, callRecordingRetentionDays: 30 });
    const { callId } = await recordedCall(userId);
    expect((await ingest()).stored).toEqual([callId]);
    expect(spoolFiles()).toEqual([]);
    const row = await h.store.db.selectFrom('phone_call_recording').selectAll().where('call_id', '=', callId).executeTakeFirstOrThrow();
    // Sealed: the WAV's header is nowhere in the stored bytes.
    expect(row.sealed.includes(Buffer.from('RIFF'))).toBe(false);
    expect((await b.call('GET', `${base}/calls/${callId}`)).json().call.recording).toMatchObject({ durationMs: 3000, bytes: row.bytes });
    const got = await b.call('GET', `${base}/calls/${callId}/recording`);
    expect(got.statusCode, got.body).toBe(200);
    expect(got.headers['content-type']).toBe('audio/wav');
    const wav = parseWav(new Uint8Array(got.rawPayload));
    expect([wav.sampleRate, wav.channels.length, wav.durationMs]).toEqual([8000, 2, 3000]);
    // The announcement first on the prospect's channel; the rep's 2 s on channel 0, the prospect's from 1 s on channel 1.
    expect(wav.channels[1]![100]).toBeCloseTo(0.3, 2);
    expect(wav.channels[0]![100]).toBe(wav.channels[0]![12000]);
    expect(Math.abs(wav.channels[0]![12000]!)).toBeGreaterThan(0.01);
    expect(wav.channels[1]![6000]).toBe(0);
    expect(Math.abs(wav.channels[1]![20000]!)).toBeGreaterThan(0.01);
    expect((await b.call('DELETE', `${base}/calls/${callId}/recording`)).json()).toEqual({ deleted: true });
    expect((await b.call('DELETE', `${base}/calls/${callId}/recording`)).statusCode).toBe(404);
    expect((await b.call('GET', `${base}/calls/${callId}/recording`)).statusCode).toBe(404);
  });

  it('writes the transcription job with the recording where this server transcribes, and none where it does not', async () => {
    const { callId } = await recordedCall(userId);
    const r = await ingestRecordings({ store: h.store, clock: systemClock, sealer: h.ctx.vault as Vault, spoolDir: spool, announcement: null, transcribes: true }, { graceMs: 0 });
    expect(r.stored).toEqual([callId]);
    expect(await h.store.db.selectFrom('call_transcript').select(['state', 'attempts']).where('call_id', '=', callId).executeTakeFirst()).toEqual({ state: 'pending', attempts: 0 });
    expect((await b.call('GET', `${base}/calls/${callId}`)).json().call.transcript).toEqual({ state: 'pending', error: null });
    const other = await recordedCall(userId);
    await ingest();
    expect(await h.store.db.selectFrom('call_transcript').select('state').where('call_id', '=', other.callId).executeTakeFirst()).toBeUndefined();
    // Asking for a transcript of a server that does not transcribe says so, in plain words.
    const asked = await b.call('POST', `${base}/calls/${other.callId}/transcript`);
    expect([asked.statusCode, asked.json().error.message]).toEqual([409, 'this server does not transcribe calls (CADENZA_TRANSCRIPTION_MODEL is not set)']);
  });

  it('quarantines a capture whose authenticated rep is not the rep of the call the Call-ID names', async () => {
    const { sipCallId, callId } = await recordedCall('someone-else');
    expect((await ingest()).quarantined).toEqual([{ sipCallId, reason: 'metadata' }]);
    const q = await h.store.db.selectFrom('call_capture_quarantine').selectAll().where('sip_call_id', '=', sipCallId).executeTakeFirstOrThrow();
    expect(q).toMatchObject({ call_id: callId, workspace_id: workspaceId });
    expect(q.message).toMatch(/rep/);
    expect(spoolFiles()).toEqual([]);
  });

  it('waits for a Call-ID no call reported yet, then quarantines it after the grace period', async () => {
    const { sipCallId } = await recordedCall(userId);
    await h.store.db.updateTable('phone_call').set({ sip_call_id: null }).where('sip_call_id', '=', sipCallId).execute();
    expect((await ingest(60_000)).waiting).toBe(1);
    expect(spoolFiles().length).toBe(2);
    expect((await ingest(0)).quarantined).toEqual([{ sipCallId, reason: 'metadata' }]);
  });

  it("purges recordings past the workspace's retention", async () => {
    const { callId } = await recordedCall(userId);
    await ingest();
    expect(await purgeRecordings(h.store, systemClock)).toBe(0);
    await h.store.db.updateTable('phone_call_recording').set({ created_at: new Date(Date.now() - 31 * 86_400_000) as never }).where('call_id', '=', callId).execute();
    expect(await purgeRecordings(h.store, systemClock)).toBe(1);
  });
});

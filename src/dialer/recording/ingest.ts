import { readFile, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../common/clock.ts';
import { CadenzaError, cadenzaError } from '../../common/errors.ts';
import type { BytesSealer } from '../../mailbox/vault.ts';
import type { Store } from '../../store/store.ts';
import { enqueueTranscript } from '../transcribe/queue.ts';
import { encodeWav, parseWav } from '../transcribe/wav.ts';
import { callAudio, SAMPLE_RATE, withAnnouncement } from './call-audio.ts';
import { metadataFileName, parseMetadata } from './metadata.ts';
import { parsePcap, refuseCapture } from './pcap.ts';
import { recordingSettings } from './settings.ts';

/**
 * The recording ingester: rtpengine's spool (its `recording-dir`: metadata/ and pcaps/) in, sealed
 * 2-channel WAVs on the call records out, the spool files deleted.
 *
 * rtpengine writes a call's metadata file when the call ends (the pcap is written as it goes), so a
 * metadata file is the sign a capture is complete. Each is matched to its call by the SIP Call-ID
 * the softphone reported, and checked against what the browser cannot forge: the rep Kamailio
 * authenticated (the `cadenza-rep:` metadata it passes to rtpengine) must be the call's rep, and
 * the workspace must still allow recording. A capture that fails any check, or does not parse, is
 * quarantined with its reason and its files deleted (a call's audio nobody may play is not kept);
 * one with no matching call yet waits `graceMs` for the softphone's report. Each pass handles at
 * most `limit` files, each bounded in size, so a pass takes bounded time.
 */
export interface IngestDeps {
  store: Store;
  clock: Clock;
  sealer: BytesSealer;
  /** rtpengine's recording-dir. */
  spoolDir: string;
  /** The consent announcement's samples at 8 kHz (loadAnnouncement), mixed into the start of each recording; null: none configured. */
  announcement: Float32Array | null;
  /** This server transcribes (CADENZA_TRANSCRIPTION_MODEL): each stored recording gets its job in the same transaction. */
  transcribes?: boolean;
}

export interface IngestOptions {
  graceMs?: number;
  limit?: number;
  /** Larger pcaps are refused: 4 hours of two G.711 legs with their headers is about 300 MB. */
  maxPcapBytes?: number;
}

export interface IngestResult {
  stored: string[];
  quarantined: { sipCallId: string; reason: string }[];
  waiting: number;
}

export const recordingContext = (callId: string) => `recording:${callId}`;

/**
 * The consent announcement, the very WAV rtpengine plays: its bytes (the reps' browsers play the
 * same file, GET …/dialer/announcement) and its 8 kHz samples (mixed into each recording).
 */
export async function readAnnouncement(path: string): Promise<{ file: Uint8Array; samples: Float32Array }> {
  const file = new Uint8Array(await readFile(path));
  const wav = parseWav(file);
  if (wav.sampleRate !== SAMPLE_RATE) throw cadenzaError('CONFIG_INVALID', `the consent announcement ${path} is ${wav.sampleRate} Hz; make it 8000 Hz (sox IN -r 8000 -c 1 OUT.wav)`);
  return { file, samples: wav.channels[0]! };
}

/** The consent announcement's 8 kHz samples, for the mix. */
export async function loadAnnouncement(path: string): Promise<Float32Array> {
  return (await readAnnouncement(path)).samples;
}

export async function ingestRecordings(deps: IngestDeps, o: IngestOptions = {}): Promise<IngestResult> {
  const graceMs = o.graceMs ?? 10 * 60_000;
  const result: IngestResult = { stored: [], quarantined: [], waiting: 0 };
  const metaDir = join(deps.spoolDir, 'metadata');
  let names: string[];
  try {
    names = (await readdir(metaDir)).filter((n) => metadataFileName(n) !== null).sort();
  } catch (e) {
    // rtpengine creates the folder at its start: before that there is nothing to ingest.
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return result;
    throw e;
  }
  for (const name of names.slice(0, o.limit ?? 20)) {
    const named = metadataFileName(name)!;
    const files = [join(metaDir, name), join(deps.spoolDir, 'pcaps', named.pcapName)];
    let call: { id: string; workspace_id: string; placed_by: string | null; direction: 'outbound' | 'inbound' } | undefined;
    try {
      const meta = parseMetadata(name, await readFile(files[0]!, 'utf8'));
      call = await deps.store.db.selectFrom('phone_call').select(['id', 'workspace_id', 'placed_by', 'direction']).where('sip_call_id', '=', meta.callId).orderBy('created_at', 'desc').executeTakeFirst();
      if (!call) {
        const age = deps.clock.now() - (await stat(files[0]!)).mtimeMs;
        if (age < graceMs) {
          result.waiting++;
          continue;
        }
        throw refuseCapture('metadata', 'No call record has this SIP Call-ID (the softphone never reported it).');
      }
      // The browser reports the Call-ID; Kamailio, not the browser, says who placed the call.
      if (meta.rep === null || meta.rep !== call.placed_by) throw refuseCapture('metadata', "The capture's authenticated rep is not the rep of the call with this Call-ID.", { rep: meta.rep });
      const ws = await deps.store.db.selectFrom('workspace').select('settings').where('id', '=', call.workspace_id).executeTakeFirstOrThrow();
      if (!recordingSettings(ws.settings as Record<string, unknown>).enabled) throw refuseCapture('metadata', "The workspace's call recording is off.");
      const size = (await stat(files[1]!)).size;
      const max = o.maxPcapBytes ?? 300 * 1024 * 1024;
      if (size > max) throw refuseCapture('too_long', `The capture is ${size} bytes; the limit is ${max}.`, { bytes: size });
      const capture = parsePcap(new Uint8Array(await readFile(files[1]!)));
      // An incoming call's INVITE came from the prospect's carrier: the rep is the callee.
      let audio = callAudio(meta, capture.datagrams, undefined, call.direction === 'inbound' ? 'callee' : 'caller');
      if (deps.announcement) audio = withAnnouncement(audio, deps.announcement);
      const wav = encodeWav(SAMPLE_RATE, audio.channels);
      const sealed = await deps.sealer.sealBytes(call.workspace_id, recordingContext(call.id), wav);
      const stored = call;
      await deps.store.db.transaction().execute(async (tx) => {
        await tx
          .insertInto('phone_call_recording')
          .values({ call_id: stored.id, workspace_id: stored.workspace_id, sealed, duration_ms: Math.round(audio.durationMs), bytes: wav.length, announced: deps.announcement !== null, created_at: new Date(deps.clock.now()) })
          .onConflict((oc) => oc.column('call_id').doNothing())
          .execute();
        if (deps.transcribes) await enqueueTranscript(tx, stored.id, stored.workspace_id, deps.clock.now());
      });
      result.stored.push(call.id);
    } catch (e) {
      const invalid = e instanceof CadenzaError && e.code === 'CAPTURE_INVALID';
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
      // A database or disk failure is not the capture's fault: leave the files for the next pass.
      if (!invalid && !missing) throw e;
      const reason = invalid ? String((e as CadenzaError).details.reason) : 'missing_file';
      await deps.store.db
        .insertInto('call_capture_quarantine')
        .values({ sip_call_id: named.callId, workspace_id: call?.workspace_id ?? null, call_id: call?.id ?? null, reason, message: (e as Error).message, at: new Date(deps.clock.now()) })
        .execute();
      result.quarantined.push({ sipCallId: named.callId, reason });
    }
    // The pcap first: a crash between the two leaves the metadata, which the next pass quarantines as missing_file.
    for (const f of files.reverse()) await unlink(f).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? undefined : Promise.reject(e)));
  }
  return result;
}

/** Deletes recordings older than their workspace's retention (settings.callRecordingRetentionDays). */
export async function purgeRecordings(store: Store, clock: Clock): Promise<number> {
  const held = await store.db.selectFrom('phone_call_recording').innerJoin('workspace', 'workspace.id', 'phone_call_recording.workspace_id').select(['workspace.id', 'workspace.settings']).distinct().execute();
  let deleted = 0;
  for (const w of held) {
    const days = recordingSettings(w.settings as Record<string, unknown>).retentionDays;
    const r = await store.db
      .deleteFrom('phone_call_recording')
      .where('workspace_id', '=', w.id)
      .where('created_at', '<', new Date(clock.now() - days * 86_400_000))
      .executeTakeFirst();
    deleted += Number(r.numDeletedRows);
  }
  return deleted;
}

/** A call's recording as WAV bytes, or undefined when it has none (another workspace's is not found). */
export async function openRecording(store: Store, sealer: BytesSealer, workspaceId: string, callId: string): Promise<Buffer | undefined> {
  const r = await store.db.selectFrom('phone_call_recording').select('sealed').where('workspace_id', '=', workspaceId).where('call_id', '=', callId).executeTakeFirst();
  return r ? sealer.openBytes(workspaceId, recordingContext(callId), r.sealed) : undefined;
}

export async function deleteRecording(store: Store, workspaceId: string, callId: string): Promise<boolean> {
  const r = await store.db.deleteFrom('phone_call_recording').where('workspace_id', '=', workspaceId).where('call_id', '=', callId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

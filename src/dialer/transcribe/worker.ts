/**
 * The transcription worker: takes jobs from the queue (queue.ts) one at a time, opens the sealed
 * recording, transcribes it (the loaded model, transcribe.ts) and stores the sealed transcript, or
 * records the failure for the queue's retry policy. It runs in the API role, beside the recording
 * ingester that fills the queue: the ingester nudges it after each stored recording, and it also
 * polls (a job retried later, one left by a worker that died, one queued by another process).
 *
 * One job at a time per process, deliberately: decoding is CPU-bound native code, and the API
 * role's requests must keep their share of the machine. transcribeCall yields to the event loop
 * every 2 s of audio, so requests and timers run between decoding steps.
 */
import type { Clock, TimerHandle } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import type { BytesSealer } from '../../mailbox/vault.ts';
import type { Store } from '../../store/store.ts';
import { openRecording } from '../recording/ingest.ts';
import { claimTranscript, completeTranscript, failTranscript } from './queue.ts';
import type { CallTranscript } from './transcribe.ts';

export type JobResult = 'done' | 'retry' | 'failed' | 'lost' | 'idle';

export interface TranscriptionWorkerDeps {
  store: Store;
  clock: Clock;
  sealer: BytesSealer;
  /** A recording's WAV bytes (2 channels: the rep, the prospect) to its transcript: transcribeCall with the loaded model. */
  transcribe(wav: Uint8Array): Promise<CallTranscript>;
  /** This worker's name in the jobs' leases. */
  owner: string;
  log?: Logger;
  /** Each job's end, for the metrics. */
  onResult?(result: Exclude<JobResult, 'idle'>): void;
  /** How often it looks for due jobs without a nudge (default 30 s). */
  pollMs?: number;
}

export class TranscriptionWorker {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(private readonly d: TranscriptionWorkerDeps) {}

  start(): void {
    this.stopped = false;
    this.nudge();
  }

  /** Runs the due jobs now (or right after the pass in progress). */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.timer?.cancel();
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.nudge();
      } else this.timer = this.d.clock.setTimer(this.d.pollMs ?? 30_000, () => this.nudge());
    });
  }

  /** No new job starts after this; the one in progress finishes and is recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.runOne()) !== 'idle');
    } catch (e) {
      // The database, not a job: the next poll tries again.
      this.d.log?.error({ err: e }, 'transcription: the queue could not be read');
    }
  }

  /** Claims one due job and carries it to its end; 'idle' when none is due. */
  async runOne(): Promise<JobResult> {
    const { store, clock, sealer, owner } = this.d;
    const job = await claimTranscript(store, owner, clock.now());
    if (!job) return 'idle';
    let result: Exclude<JobResult, 'idle'>;
    try {
      const wav = await openRecording(store, sealer, job.workspaceId, job.callId);
      // Deleted since the claim (by hand, retention, erasure): its job went with it.
      if (!wav) result = 'lost';
      else {
        const t0 = clock.now();
        const transcript = await this.d.transcribe(wav);
        result = (await completeTranscript(store, sealer, job, owner, transcript, clock.now())) ? 'done' : 'lost';
        this.d.log?.info({ callId: job.callId, words: transcript.words.length, audioMs: transcript.durationMs, ms: clock.now() - t0, result }, 'call transcribed');
      }
    } catch (e) {
      const then = await failTranscript(store, job, owner, e, clock.now());
      result = then.next === 'retry' ? 'retry' : 'failed';
      this.d.log?.warn({ err: e, callId: job.callId, attempts: job.attempts, next: then.next === 'retry' ? new Date(then.at).toISOString() : 'failed' }, 'call transcription failed');
    }
    this.d.onResult?.(result);
    return result;
  }
}

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { cadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import { FairQueue } from '../../ops/fair-queue.ts';
import type { IngestSteps, PreparedMail } from '../pipeline.ts';
import type { ThreadData, ThreadReply, ThreadTask } from './prepare-thread.ts';

/**
 * The sync role's CPU stages (parse → new text → classify) off the main thread: a small pool of
 * worker threads, one message at a time each, under a real deadline. A message still running at
 * its deadline has its worker terminated (a regex or a parser that does not yield cannot be
 * interrupted any other way) and is quarantined with reason `timeout`; a new worker takes the
 * dead one's place and the batch goes on. The main thread stays free meanwhile, so the API, the
 * scheduler, the senders and the lease renewals (ops/lease-balancer.ts) run whatever a message
 * costs (ARCHITECTURE promises 3 and 8).
 *
 * node:worker_threads directly: the pool is a queue and a timer per task, and owning it keeps
 * terminate-and-replace, the one thing a deadline needs, in plain sight.
 *
 * The threads load TypeScript sources: under `npm start` (tsx) they inherit its loader; elsewhere
 * (vitest) prepare-thread.mjs registers tsx's loader in the thread itself.
 */
export interface PreparePoolOptions {
  /** Worker threads (default: the cores less one for the main thread, 1 to 4). */
  size?: number;
  /** Wall-clock budget of one message in a worker, from the moment a worker takes it (default 15 s). */
  deadlineMs?: number;
  /** Heap of one worker; a message that needs more fails alone (default 512 MB). */
  maxHeapMb?: number;
  /**
   * The module whose `createSteps()` the threads run (default: pipeline-steps.ts, the real stages).
   * Tests pass one that is slow on purpose.
   */
  stepsModule?: URL;
  log?: Logger;
}

export const DEFAULT_PREPARE_DEADLINE_MS = 15_000;

interface Task {
  raw: Uint8Array;
  resolve: (r: PreparedMail) => void;
  reject: (e: unknown) => void;
}

interface Slot {
  worker: Worker;
  busy: { id: number; task: Task; timer: NodeJS.Timeout; started: number } | null;
  ready: boolean;
}

const ENTRY = new URL('./prepare-thread.mjs', import.meta.url);
// This module runs as TypeScript (tsx, vitest) or as the compiled JavaScript of dist/ (bin/cadenza.js):
// the thread's modules are named with this module's own extension.
const OWN_EXT = import.meta.url.endsWith('.js') ? '.js' : '.ts';

export class PreparePool {
  readonly size: number;
  readonly deadlineMs: number;
  private readonly slots: Slot[] = [];
  /** Waiting messages by workspace, served in turn: one workspace's first sync of 20,000 messages does not hold another's reply behind it. */
  private readonly queue = new FairQueue<Task>();
  private nextId = 1;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  /** Counters for metrics and tests. */
  readonly stats = { done: 0, timedOut: 0, crashed: 0, replaced: 0 };

  constructor(private readonly o: PreparePoolOptions = {}) {
    this.size = Math.max(1, o.size ?? Math.min(4, Math.max(1, availableParallelism() - 1)));
    this.deadlineMs = o.deadlineMs ?? DEFAULT_PREPARE_DEADLINE_MS;
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  /** Messages running in a thread now. */
  get running(): number {
    return this.slots.filter((s) => s.busy).length;
  }

  /** The threads' ids; -1 for one that has ended (after close, every one). */
  get threadIds(): number[] {
    return this.slots.map((s) => s.worker.threadId);
  }

  /** The pool as the pipeline's steps: `prepare` only (the pipeline calls nothing else when it is there). */
  steps(): IngestSteps {
    const refuse = () => {
      throw new Error('the prepare pool runs the stages together: call prepare()');
    };
    return { parse: refuse, newText: refuse, classify: refuse, prepare: (raw, key) => this.prepare(raw, key) };
  }

  /** `key`: whose turn the message waits in (the mailbox's workspace). */
  prepare(raw: Uint8Array, key = ''): Promise<PreparedMail> {
    if (this.closed) return Promise.reject(cadenzaError('WORKER_POOL_CLOSED', 'the ingestion worker pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push(key, { raw, resolve, reject });
      this.dispatch();
      this.updateRefs();
    });
  }

  /**
   * Drain: no new work; messages waiting are refused (their batch is not committed, and is pulled
   * again), messages running are let finish within their deadline, then every thread ends.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.queue.drain()) t.reject(cadenzaError('WORKER_POOL_CLOSED', 'the ingestion worker pool was closed'));
    await new Promise<void>((r) => {
      this.idleWaiters.push(r);
      this.checkIdle();
    });
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const data: ThreadData = { stepsModule: (this.o.stepsModule ?? new URL(`../pipeline-steps${OWN_EXT}`, import.meta.url)).href };
    const worker = new Worker(ENTRY, {
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: this.o.maxHeapMb ?? 512 },
      // The thread's output is the main process's; its own logger would be a second one.
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker, busy: null, ready: false };
    worker.on('message', (m: ThreadReply | { ready: true }) => {
      if ('ready' in m) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      const b = slot.busy;
      if (!b || b.id !== m.id) return;
      clearTimeout(b.timer);
      slot.busy = null;
      this.stats.done++;
      b.task.resolve(m.result);
      this.checkIdle();
      this.dispatch();
    });
    worker.on('error', (e) => this.failed(slot, `worker_failed: ${e.message}`));
    worker.on('exit', (code) => {
      if (!this.closed && this.slots.includes(slot)) this.failed(slot, `worker_failed: the worker thread exited (code ${code})`);
    });
    if (!this.queue.length) worker.unref();
    return slot;
  }

  private checkIdle(): void {
    this.updateRefs();
    if (this.slots.every((s) => !s.busy)) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Threads keep the process alive only while there is work in hand or waiting: an idle pool does not. */
  private updateRefs(): void {
    const working = this.queue.length > 0 || this.slots.some((s) => s.busy);
    for (const s of this.slots) {
      if (working) s.worker.ref();
      else s.worker.unref();
    }
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (!this.queue.length) return;
      if (slot.busy || !slot.ready) continue;
      const task = this.queue.shift()!.item;
      const id = this.nextId++;
      const timer = setTimeout(() => this.timedOut(slot), this.deadlineMs);
      slot.busy = { id, task, timer, started: performance.now() };
      const msg: ThreadTask = { id, raw: task.raw };
      slot.worker.postMessage(msg);
    }
  }

  private timedOut(slot: Slot): void {
    const b = slot.busy;
    if (!b) return;
    this.stats.timedOut++;
    this.o.log?.warn({ ms: Math.round(performance.now() - b.started), deadlineMs: this.deadlineMs }, 'a message outran its deadline in the ingestion worker; quarantined, worker replaced');
    this.replace(slot, { ok: false, reason: `timeout: parse and classify took over ${this.deadlineMs} ms (worker stopped)` });
  }

  /** The thread died (out of memory, a crash): the message it held is quarantined with the reason. */
  private failed(slot: Slot, reason: string): void {
    if (!this.slots.includes(slot)) return;
    if (!slot.ready) {
      // The thread could not even load: not the message's fault. The waiting batch fails (and is
      // retried after the loop's backoff); a new thread is tried a second later, not in a loop.
      this.o.log?.error({ reason }, 'an ingestion worker failed to start');
      for (const t of this.queue.drain()) t.reject(new Error(`the ingestion worker failed to start: ${reason}`));
      this.slots.splice(this.slots.indexOf(slot), 1);
      setTimeout(() => {
        if (!this.closed) this.slots.push(this.spawn());
      }, 1000).unref();
      return;
    }
    this.stats.crashed++;
    this.o.log?.warn({ reason }, 'an ingestion worker failed; replaced');
    this.replace(slot, { ok: false, reason });
  }

  private replace(slot: Slot, result: PreparedMail): void {
    const b = slot.busy;
    slot.busy = null;
    if (b) clearTimeout(b.timer);
    const at = this.slots.indexOf(slot);
    if (at >= 0) this.slots.splice(at, 1);
    slot.worker.removeAllListeners('exit');
    void slot.worker.terminate();
    if (!this.closed) {
      this.slots.push(this.spawn());
      this.stats.replaced++;
    }
    b?.task.resolve(result);
    this.checkIdle();
  }
}

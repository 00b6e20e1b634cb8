import { systemClock, type Clock, type TimerHandle } from '../common/clock.ts';
import { cadenzaError } from '../common/errors.ts';
import type { Logger } from '../common/logger.ts';
import type { Store } from '../store/store.ts';
import type { DemoProgress } from './progress.ts';
import { startDemo, type DemoOptions, type DemoRun } from './run-demo.ts';

/**
 * One demo at a time inside a running server, for the first-run page's "demo workspace" button
 * (the route that calls it belongs to the API): start it on a workspace, read its progress, stop it.
 * It ends by itself after `durationMs` of real time and is retired (its live enrollments stopped
 * through the engine, its mailboxes marked gone).
 *
 * While it runs, the process's own scheduler, sender and sync roles are suspended (`roles`): they
 * run on real time and serve the whole store, so beside the demo's faster clock they would plan
 * and claim the demo's work at the wrong instants. The demo only starts on a store where nothing
 * else is live, so suspending them holds nothing up; they resume when it ends. And the API reads
 * the demo's clock meanwhile (`world`), so what a person does during the demo is stamped in the
 * demo's time, not hours or days before what the demo's engine writes.
 */
export interface SuspendableRoles {
  suspend(): Promise<void>;
  resume(): Promise<void>;
}

export interface DemoStatus {
  workspaceId: string;
  startedAt: number;
  endsAt: number;
  progress: DemoProgress;
}

export class DemoControl {
  private run: DemoRun | undefined;
  private startedAt = 0;
  private endsAt = 0;
  private timer: TimerHandle | undefined;
  private starting = false;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      store: Store;
      clock?: Clock;
      log?: Logger;
      roles?: SuspendableRoles;
      publicUrl?: string;
      /** The API's clock: it reads the demo's while the demo runs (common/switchable-clock.ts). */
      world?: { use(clock: Clock): void; reset(): void };
    },
  ) {}

  get running(): boolean {
    return this.run !== undefined;
  }

  async start(o: Omit<DemoOptions, 'store' | 'log' | 'publicUrl'> & { durationMs?: number } = {}): Promise<{ workspaceId: string; endsAt: number }> {
    if (this.run || this.starting) throw cadenzaError('CONFLICT', 'a demo is already running in this process');
    this.starting = true;
    const clock = this.deps.clock ?? systemClock;
    try {
      await this.deps.roles?.suspend();
      try {
        this.run = await startDemo({ ...o, store: this.deps.store, ...(this.deps.log ? { log: this.deps.log } : {}), ...(this.deps.publicUrl ? { publicUrl: this.deps.publicUrl } : {}) });
      } catch (e) {
        await this.deps.roles?.resume();
        throw e;
      }
      this.deps.world?.use(this.run.clock);
      this.startedAt = clock.now();
      this.endsAt = this.startedAt + (o.durationMs ?? 120_000);
      this.timer = clock.setTimer(this.endsAt - this.startedAt, () => {
        void this.stop().catch((e: unknown) => this.deps.log?.error({ err: e }, 'demo could not stop'));
      });
      return { workspaceId: this.run.workspaceId, endsAt: this.endsAt };
    } finally {
      this.starting = false;
    }
  }

  async status(): Promise<DemoStatus | null> {
    const r = this.run;
    if (!r) return null;
    return { workspaceId: r.workspaceId, startedAt: this.startedAt, endsAt: this.endsAt, progress: await r.progress() };
  }

  /** Stops the running demo (if any), retires it, and resumes the suspended roles. */
  stop(): Promise<void> {
    const r = this.run;
    if (!r) return this.stopping ?? Promise.resolve();
    this.stopping ??= (async () => {
      this.timer?.cancel();
      try {
        await r.stop();
        await r.retire();
      } finally {
        this.run = undefined;
        this.stopping = undefined;
        this.deps.world?.reset();
        await this.deps.roles?.resume();
      }
    })();
    return this.stopping;
  }
}

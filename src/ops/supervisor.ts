import type { Clock, TimerHandle } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import { afterCrash, defaultRestartPolicy, freshHistory, type RestartHistory, type RestartPolicy } from './restart-policy.ts';

/**
 * `cadenza start --supervise`: one child process per group of roles (one per role on PostgreSQL,
 * one for every role on the embedded store, which one process may hold), each started again after
 * it ends on its own, on the back-off of restart-policy.ts.
 *
 * A restarted child resumes from durable state only: its leases are taken back (the dead pid on
 * this host is proof, ops/leases.ts), a send it left in flight is settled through the Sent folder
 * (sending/outbox.ts), and the pacing budget is rebuilt from the claims in the database
 * (sending/dispatch/reserve.ts), so a restart sends no burst. The supervisor holds no state of the
 * work at all: it only counts lives.
 *
 * Stop: SIGTERM to every child at once (each drains: a sender finishes the message it is handing
 * over, a sync commits its batch), no restart after that, and SIGKILL to any child still running at
 * `killAfterMs` (a drain that hangs must not keep a stop from ending; what it had in flight is
 * settled by the next start as after a crash).
 */
export interface RoleChild {
  readonly pid: number | undefined;
  /** Resolves when the process has ended. */
  readonly ended: Promise<{ code: number | null; signal: string | null }>;
  kill(signal: NodeJS.Signals): void;
}

export interface SupervisorOptions {
  /** Each entry one child: the roles it runs. */
  groups: string[][];
  spawn(roles: string[]): RoleChild;
  clock: Clock;
  log: Logger;
  policy?: RestartPolicy;
  /** How long a stop waits for the children's drain before SIGKILL; default 60 s. */
  killAfterMs?: number;
}

export type SupervisorEnd = { kind: 'stopped' } | { kind: 'gave-up'; roles: string; reason: string };

interface Slot {
  roles: string[];
  name: string;
  child?: RoleChild;
  startedAt: number;
  history: RestartHistory;
  restarts: number;
  timer?: TimerHandle;
}

export class Supervisor {
  private readonly slots: Slot[];
  private stopping = false;
  private finish!: (end: SupervisorEnd) => void;
  /** Resolves once every child has ended after a stop, or after the supervisor gave up (it stops the others first). */
  readonly done: Promise<SupervisorEnd>;

  constructor(private readonly o: SupervisorOptions) {
    this.slots = o.groups.map((roles) => ({ roles, name: roles.join(','), startedAt: 0, history: freshHistory, restarts: 0 }));
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  start(): void {
    for (const s of this.slots) this.launch(s);
  }

  /** Restarts so far, by the roles of each child (also in every restart's log line). */
  restartCounts(): Record<string, number> {
    return Object.fromEntries(this.slots.map((s) => [s.name, s.restarts]));
  }

  /** The pid of each child running now, by its roles. */
  pids(): Record<string, number | undefined> {
    return Object.fromEntries(this.slots.map((s) => [s.name, s.child?.pid]));
  }

  /** Drains every child (SIGTERM) and resolves once all have ended; a second call waits for the same end. */
  stop(reason: string): Promise<SupervisorEnd> {
    void this.stopAll(reason, { kind: 'stopped' });
    return this.done;
  }

  private launch(s: Slot): void {
    s.timer = undefined;
    if (this.stopping) return;
    const child = this.o.spawn(s.roles);
    s.child = child;
    s.startedAt = this.o.clock.now();
    this.o.log.info({ roles: s.name, pid: child.pid, restarts: s.restarts }, `supervisor: role ${s.name} started (pid ${child.pid})`);
    void child.ended.then((end) => this.ended(s, child, end));
  }

  private ended(s: Slot, child: RoleChild, end: { code: number | null; signal: string | null }): void {
    if (s.child !== child) return;
    s.child = undefined;
    if (this.stopping) return;
    const how = end.signal ? `killed by ${end.signal}` : `exited with code ${end.code}`;
    const d = afterCrash(s.history, s.startedAt, this.o.clock.now(), this.o.policy ?? defaultRestartPolicy, end.code === 0);
    s.history = d.history;
    if (d.kind === 'give-up') {
      this.o.log.error({ roles: s.name, code: end.code, signal: end.signal, restarts: s.restarts }, `supervisor: role ${s.name} ${how}; giving up: ${d.reason}`);
      void this.stopAll(`role ${s.name} gave up`, { kind: 'gave-up', roles: s.name, reason: d.reason });
      return;
    }
    s.restarts++;
    this.o.log.warn(
      { roles: s.name, code: end.code, signal: end.signal, restarts: s.restarts, delayMs: d.delayMs },
      `supervisor: role ${s.name} ${how}; restart ${s.restarts} in ${d.delayMs} ms`,
    );
    s.timer = this.o.clock.setTimer(d.delayMs, () => this.launch(s));
  }

  private async stopAll(reason: string, end: SupervisorEnd): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const running = this.slots.filter((s) => s.child);
    this.o.log.info({ reason, roles: running.map((s) => s.name) }, `supervisor: ${reason}: draining ${running.map((s) => s.name).join(' ') || 'nothing'}`);
    for (const s of this.slots) s.timer?.cancel();
    const killAfter = this.o.killAfterMs ?? 60_000;
    await Promise.all(
      running.map(async (s) => {
        const child = s.child!;
        child.kill('SIGTERM');
        const late = this.o.clock.setTimer(killAfter, () => {
          this.o.log.warn({ roles: s.name, pid: child.pid, afterMs: killAfter }, `supervisor: role ${s.name} still draining after ${killAfter} ms: SIGKILL`);
          child.kill('SIGKILL');
        });
        await child.ended;
        late.cancel();
      }),
    );
    this.o.log.info({ restarts: this.restartCounts() }, 'supervisor: every role stopped');
    this.finish(end);
  }
}

import { coalesce } from '../../common/coalesce.ts';
import type { TimerHandle } from '../../common/clock.ts';
import { isCadenzaError } from '../../common/errors.ts';
import { Membership } from '../../ops/membership.ts';
import type { ReplyRequest } from '../reply.ts';
import { runReply } from './reply-task.ts';
import { runRevocation } from './revoke-task.ts';
import { defaultRevocationPolicy, nextRevocation, type RevocationPolicy } from './task-policy.ts';
import type { TaskContext } from './task-context.ts';
import { claimTask, finishTask, nextDue, purgeFinished, recoverStale, retryTask, RUNNER_ROLE, type ClaimedTask, type TaskOutcome } from './task-queue.ts';
import { runConnectionTest } from './test-task.ts';

/**
 * Carries out credential tasks (task-queue.ts) in a process that may read mailbox credentials:
 * the sender role (app.ts). The API writes a task and nudges ('credentials' work nudge, here or
 * through the push bus); a pass here claims due tasks, skip-locked so that several sender
 * processes share them, runs each through its kind's file below, records its outcome, and says
 * it is done (onDone: the asker's wait ends at once, here or in the API's process).
 *
 * A revocation the provider did not take is queued again with its backoff (task-policy.ts), and a
 * timer wakes the runner when the earliest retry falls due. The runner joins the membership under
 * RUNNER_ROLE, so an asker can tell at once that no process is there to take its task.
 */
export interface TaskRunnerOptions extends TaskContext {
  /** This runner's membership id. */
  owner: string;
  onDone?: (taskId: string) => void;
  revocation?: RevocationPolicy;
  /** Tasks carried out at once (a reply waits up to its settling window; a test need not wait behind it). */
  concurrency?: number;
  /** The longest wait between passes when nothing is nudged or due (a lost nudge costs this). */
  idleMs?: number;
  heartbeatMs?: number;
}

/** A running task's claim: far past any task's own deadlines (a reply's 20 s settle, a test's timeouts). */
const CLAIM_FOR_MS = 10 * 60_000;
/** Ended tasks are kept this long (task-queue.ts purgeFinished), looked for at most once an hour. */
const KEEP_FINISHED_MS = 7 * 86_400_000;
const PURGE_EVERY_MS = 3_600_000;

const kinds: Record<ClaimedTask['kind'], (c: TaskContext, t: ClaimedTask) => Promise<unknown>> = {
  test: (c, t) => runConnectionTest(c, { workspaceId: t.workspace_id, mailboxId: t.mailbox_id }),
  reply: (c, t) => runReply(c, { ...(t.input as unknown as ReplyRequest), workspaceId: t.workspace_id }),
  revoke: (c, t) => {
    if (!t.sealed) throw new Error('a revocation task without its sealed token');
    return runRevocation(c, { workspaceId: t.workspace_id, mailboxId: t.mailbox_id, sealed: Buffer.from(t.sealed) });
  },
};

export class CredentialTaskRunner {
  private readonly membership: Membership;
  private readonly pass: () => Promise<void>;
  private timer: TimerHandle | undefined;
  private stopped = false;
  private lastPurge = Number.NEGATIVE_INFINITY;
  private current: Promise<void> = Promise.resolve();

  constructor(private readonly o: TaskRunnerOptions) {
    this.membership = new Membership({ store: o.store, clock: o.clock, role: RUNNER_ROLE, id: o.owner, ...(o.heartbeatMs ? { heartbeatMs: o.heartbeatMs } : {}), ...(o.log ? { log: o.log } : {}) });
    this.pass = coalesce(() => this.runPass(), (e) => o.log?.warn({ err: e }, 'credential tasks: a pass failed'));
  }

  async start(): Promise<void> {
    await this.membership.join();
    void this.nudge();
  }

  /** A task was written (or may be due): a pass now. */
  nudge(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.current = this.pass();
    return this.current;
  }

  /** Finishes the tasks in hand, then leaves: an asker then sees no runner, and says so. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.current;
    await this.membership.leave().catch((e: unknown) => this.o.log?.warn({ err: e }, 'credential tasks: leaving the membership failed'));
  }

  private async runPass(): Promise<void> {
    if (this.stopped) return;
    this.timer?.cancel();
    const db = this.o.store.db;
    const r = await recoverStale(db, this.o.clock.now());
    if (r.requeued || r.failed) this.o.log?.warn(r, 'credential tasks left running by a stopped process: tests and revocations queued again, replies failed');
    const now = this.o.clock.now();
    if (now - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = now;
      await purgeFinished(db, now - KEEP_FINISHED_MS);
    }
    await Promise.all(Array.from({ length: this.o.concurrency ?? 4 }, () => this.drain()));
    if (this.stopped) return;
    const due = await nextDue(db);
    const idle = this.o.idleMs ?? 60_000;
    const wait = due === undefined ? idle : Math.min(idle, Math.max(0, due - this.o.clock.now()));
    this.timer = this.o.clock.setTimer(wait, () => void this.nudge());
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const t = await claimTask(this.o.store.db, this.o.clock.now(), CLAIM_FOR_MS);
      if (!t) return;
      await this.carryOut(t);
    }
  }

  private async carryOut(t: ClaimedTask): Promise<void> {
    const db = this.o.store.db;
    let outcome: TaskOutcome;
    try {
      outcome = { ok: true, value: await kinds[t.kind](this.o, t) };
    } catch (e) {
      outcome = this.failure(t, e);
      if (t.kind === 'revoke') {
        const next = nextRevocation(t.attempts, this.o.revocation ?? defaultRevocationPolicy);
        this.o.log?.warn({ taskId: t.id, mailboxId: t.mailbox_id, attempts: t.attempts, err: outcome.ok ? undefined : outcome.error.message, retryInMs: 'retryInMs' in next ? next.retryInMs : null }, 'could not revoke the OAuth grant of a removed mailbox');
        if ('retryInMs' in next) {
          const now = this.o.clock.now();
          await retryTask(db, t.id, outcome, now + next.retryInMs, now);
          return;
        }
      }
    }
    await finishTask(db, t.id, outcome, this.o.clock.now());
    this.o.onDone?.(t.id);
  }

  /** The error the asker is given: a Cadenza error as it is; anything else logged here and said without its message (it may hold a secret). */
  private failure(t: ClaimedTask, e: unknown): TaskOutcome {
    if (isCadenzaError(e)) return { ok: false, error: { code: e.code, message: e.message, details: e.details, ...((e as { userFacing?: boolean }).userFacing ? { userFacing: true } : {}) } };
    this.o.log?.error({ err: e, taskId: t.id, kind: t.kind }, 'credential task failed');
    return { ok: false, error: { code: 'INTERNAL', message: 'the sender could not carry out this task; it is logged there', details: { taskId: t.id } } };
  }
}

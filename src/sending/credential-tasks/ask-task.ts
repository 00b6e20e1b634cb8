import type { Clock, TimerHandle } from '../../common/clock.ts';
import { cadenzaError, errorCodes, type ErrorCode } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { Db } from '../../store/store.ts';
import { defaultWaitLimits, waitVerdict, type WaitLimits } from './task-policy.ts';
import { enqueueTask, liveRunners, readTask, withdrawIfQueued, type TaskOutcome } from './task-queue.ts';

/**
 * The asking side of a credential task, for a process that may not read credentials (the API
 * under least privilege, and every API process alike: one path, whatever the grants). It writes
 * the task, nudges the runners (task-runner.ts, in the sender role: this process's or another's
 * through the push bus), and waits for the runner's "done" or a timeout (task-policy.ts
 * waitVerdict), reading the task again every few seconds in case a signal was lost. The answer is
 * the runner's: its value, or its error rethrown with the same code, so the HTTP answers are those
 * the routes gave when they opened credentials themselves.
 *
 * In plain words when it cannot be done: no runner's heartbeat is fresh (no sender process runs),
 * or none claimed the task in time (it is withdrawn: nothing was done), both SENDER_UNAVAILABLE;
 * or the runner took it and has not answered in time (a reply: SEND_UNCONFIRMED, safe to send
 * again with its idempotency key, which answers what the runner did).
 */

/** How an asker hears of work done, and tells the runners there is work (work-nudge.ts). */
export interface TaskSignals {
  nudge(): void;
  onDone(fn: (taskId: string) => void): () => void;
}

export interface AskDeps {
  db: Db;
  clock: Clock;
  random: Random;
  signals?: TaskSignals;
  limits?: WaitLimits;
}

/** A runner whose heartbeat (3 s, ops/membership.ts) is older than this is taken as gone: five missed beats. */
const RUNNER_FRESH_MS = 15_000;

const what = { test: 'testing the mailbox', reply: 'sending the reply' } as const;

export async function askCredentialTask(deps: AskDeps, t: { workspaceId: string; mailboxId: string; kind: 'test' | 'reply'; input?: Record<string, unknown> }): Promise<unknown> {
  const { db, clock } = deps;
  const limits = deps.limits ?? defaultWaitLimits;
  const startedMs = clock.now();
  if ((await liveRunners(db, startedMs, RUNNER_FRESH_MS)) === 0) {
    throw unavailable(`No sender process is running, and ${what[t.kind]} needs one: only the sender role opens mailbox credentials. Start the sender role (it runs in \`cadenza start\`, or on its own with --roles sender), then try again. Nothing was done.`);
  }
  const id = newId(startedMs, deps.random);
  // Set by the runner's "done" for this task; a wait in progress ends at once.
  let done = false;
  let wake: (() => void) | undefined;
  const off = deps.signals?.onDone((taskId) => {
    if (taskId !== id) return;
    done = true;
    wake?.();
  });
  try {
    await enqueueTask(db, { id, workspaceId: t.workspaceId, mailboxId: t.mailboxId, kind: t.kind, input: t.input ?? {}, now: startedMs });
    deps.signals?.nudge();
    for (;;) {
      const row = await readTask(db, id);
      if (!row) throw new Error(`credential task ${id} vanished`);
      const v = waitVerdict(row.state, startedMs, clock.now(), limits);
      if (v.kind === 'answer') return answer(row.state, row.result, t.kind);
      if (v.kind === 'withdraw') {
        if (await withdrawIfQueued(db, id, clock.now())) {
          throw unavailable(`No sender process took this within ${Math.round(limits.claimWithinMs / 1000)} s (the sender role may be stopping or overloaded), so it was withdrawn: nothing was done. Try again in a moment.`, { taskId: id });
        }
        continue;
      }
      if (v.kind === 'timed_out') throw timedOut(t.kind, id, limits, t.input);
      if (!done) await signalOrTimeout(clock, v.ms, (fn) => (wake = fn));
      wake = undefined;
      done = false;
    }
  } finally {
    off?.();
  }
}

function signalOrTimeout(clock: Clock, ms: number, onSignal: (fn: () => void) => void): Promise<'signal' | 'timeout'> {
  return new Promise((resolve) => {
    let timer: TimerHandle | undefined;
    onSignal(() => {
      timer?.cancel();
      resolve('signal');
    });
    timer = clock.setTimer(ms, () => resolve('timeout'));
  });
}

function answer(state: string, result: TaskOutcome | null, kind: 'test' | 'reply'): unknown {
  if (state === 'cancelled' || !result) throw unavailable(`${what[kind]} was withdrawn before a sender took it: nothing was done. Try again.`);
  if (result.ok) return result.value;
  const e = result.error;
  if (!(e.code in errorCodes)) throw new Error(`${what[kind]} failed in the sender: ${e.message}`);
  const err = cadenzaError(e.code as ErrorCode, e.message, e.details);
  throw e.userFacing ? Object.assign(err, { userFacing: true }) : err;
}

/** The API says these 503s' messages (api/http/errors.ts userFacing): what to do, with no secret. */
function unavailable(message: string, details: Record<string, unknown> = {}): Error {
  return Object.assign(cadenzaError('SENDER_UNAVAILABLE', message, details), { userFacing: true });
}

function timedOut(kind: 'test' | 'reply', taskId: string, limits: WaitLimits, input: Record<string, unknown> | undefined): Error {
  const s = Math.round(limits.answerWithinMs / 1000);
  if (kind === 'test') return unavailable(`A sender took the test but gave no answer within ${s} s; the mailbox's servers may be slow to answer. Its verification shows the result once it comes.`, { taskId });
  const key = typeof input?.idempotencyKey === 'string';
  const retry = key
    ? 'Sending it again with the same idempotency key is safe: it answers what the sender did, and never sends twice.'
    : 'Without an idempotency key, look in the Sent folder before sending it again.';
  return Object.assign(cadenzaError('SEND_UNCONFIRMED', `The sender is still sending this reply after ${s} s, and its answer has not come. ${retry}`, { taskId, sentFolder: 'unavailable', retrySafe: key }), { userFacing: true });
}

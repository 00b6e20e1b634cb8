import { backoffCeiling, type BackoffPolicy } from '../../common/backoff.ts';
import type { CredentialTaskState } from '../../store/schema.ts';

/**
 * The two timing rules of credential tasks, pure (the callers own the clock):
 *
 *   nextRevocation  when a failed revocation is tried again, or that it is given up;
 *   waitVerdict     what an asker (the API) does next while it waits for a test's or a reply's
 *                   answer: answer, withdraw a task no sender took, give up waiting, or wait on.
 */

export interface RevocationPolicy extends BackoffPolicy {
  /** Tries in all, the first included; after the last failure the grant is reported as not revoked. */
  maxAttempts: number;
}

/**
 * 1 min, 2 min, 4 min … up to 6 h, ten tries: a provider down for a day is still reached. No
 * jitter: one task per removed mailbox, nothing to spread.
 */
export const defaultRevocationPolicy: RevocationPolicy = { baseMs: 60_000, capMs: 6 * 3_600_000, maxAttempts: 10 };

/** After the `attempts`-th try failed: the delay before the next, or give up. */
export function nextRevocation(attempts: number, policy: RevocationPolicy = defaultRevocationPolicy): { retryInMs: number } | { giveUp: true } {
  if (attempts >= policy.maxAttempts) return { giveUp: true };
  return { retryInMs: backoffCeiling(attempts - 1, policy) };
}

export interface WaitLimits {
  /** A task no sender has claimed after this long is withdrawn: no sender is taking work. */
  claimWithinMs: number;
  /** The answer is given up after this long (the task may still finish: a reply's key replays it). */
  answerWithinMs: number;
  /** Between two reads of the task when no signal comes (a NOTIFY lost with a connection). */
  backstopMs: number;
}

/**
 * A connection test takes a few seconds; a reply up to its Sent-folder settling window (20 s,
 * sending/reply.ts) after the send. 60 s covers both with room; a sender takes a task within
 * milliseconds of its nudge, so 10 s unclaimed means none is taking work.
 */
export const defaultWaitLimits: WaitLimits = { claimWithinMs: 10_000, answerWithinMs: 60_000, backstopMs: 2_000 };

export type WaitVerdict =
  | { kind: 'answer' }
  | { kind: 'withdraw' }
  | { kind: 'timed_out' }
  | { kind: 'wait'; ms: number };

/** `startedMs`: when the task was written; `state`: as just read. */
export function waitVerdict(state: CredentialTaskState, startedMs: number, nowMs: number, limits: WaitLimits = defaultWaitLimits): WaitVerdict {
  if (state === 'done' || state === 'failed' || state === 'cancelled') return { kind: 'answer' };
  const elapsed = nowMs - startedMs;
  if (state === 'queued' && elapsed >= limits.claimWithinMs) return { kind: 'withdraw' };
  if (elapsed >= limits.answerWithinMs) return { kind: 'timed_out' };
  const nextDeadline = state === 'queued' ? limits.claimWithinMs : limits.answerWithinMs;
  return { kind: 'wait', ms: Math.max(1, Math.min(limits.backstopMs, nextDeadline - elapsed)) };
}

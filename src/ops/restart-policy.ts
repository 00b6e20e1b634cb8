import { backoffCeiling } from '../common/backoff.ts';

/**
 * When the supervisor (supervisor.ts) starts a role process again after it ended on its own, and
 * when it stops trying. Pure: the caller passes the times it read from its clock.
 *
 * Exponential back-off without jitter: one supervisor restarts a handful of children, there is no
 * herd to spread, and a fixed 1 s, 2 s, 4 s … reads plainly in the log. A child that stayed up for
 * `stableMs` has shown the cause is gone (a database restart, a lost network): its next crash starts
 * again from the first delay. `maxFastCrashes` crashes in a row, each within `stableMs` of its start,
 * mean the cause stays (a wrong setting, a missing key, a migration the database refuses): the
 * supervisor gives up and says so, instead of restarting every 5 minutes forever.
 */
export interface RestartPolicy {
  /** The delay before the first restart. */
  baseMs: number;
  /** No delay grows past this. */
  capMs: number;
  /** A child up at least this long crashed for a new reason: its back-off starts over. */
  stableMs: number;
  /** This many fast crashes in a row: give up. */
  maxFastCrashes: number;
}

/** 1 s, 2 s, 4 s, 8 s, 16 s, then give up at the 6th crash in a row within a minute of its start. */
export const defaultRestartPolicy: RestartPolicy = { baseMs: 1_000, capMs: 60_000, stableMs: 60_000, maxFastCrashes: 6 };

/** What one role's supervisor remembers between its child's lives. */
export interface RestartHistory {
  /** Crashes in a row, each within stableMs of its start. */
  fastCrashes: number;
}

export const freshHistory: RestartHistory = { fastCrashes: 0 };

export type RestartDecision =
  | { kind: 'restart'; delayMs: number; history: RestartHistory }
  | { kind: 'give-up'; reason: string; history: RestartHistory };

/**
 * The child started at `startedAt` ended on its own at `endedAt`: restart it after a delay, or give
 * up. `clean`: it exited with status 0, after a drain someone asked of it alone (a SIGTERM to the
 * child, not to the supervisor): restarted after the first delay, and not counted as a crash, so
 * that an operator draining one role now and then never makes the supervisor give up.
 */
export function afterCrash(history: RestartHistory, startedAt: number, endedAt: number, policy: RestartPolicy = defaultRestartPolicy, clean = false): RestartDecision {
  if (clean) return { kind: 'restart', delayMs: policy.baseMs, history };
  const upMs = Math.max(0, endedAt - startedAt);
  const fastCrashes = upMs >= policy.stableMs ? 1 : history.fastCrashes + 1;
  const next = { fastCrashes };
  if (fastCrashes >= policy.maxFastCrashes) {
    return { kind: 'give-up', reason: `it ended ${fastCrashes} times in a row, each within ${Math.round(policy.stableMs / 1000)} s of its start`, history: next };
  }
  return { kind: 'restart', delayMs: backoffCeiling(fastCrashes - 1, { baseMs: policy.baseMs, capMs: policy.capMs }), history: next };
}

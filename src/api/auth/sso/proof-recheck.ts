/**
 * What the daily re-check of a verified SSO domain decides (0130, domain-proof.ts): pure, from the
 * domain's streak of failures, what the lookup found, and the time. proof-recheck-duty.ts applies it.
 *
 * A proof must not outlive the record: a domain sold or handed to someone else, or a workspace
 * that stopped controlling it, must stop admitting newcomers. But one bad day must not lock a
 * company out of just-in-time sign-in either: DNS answers time out, a zone is republished with a
 * record briefly missing. So only a lookup that answered counts (no record, or another token); a
 * lookup that failed (a timeout, SERVFAIL, a refused query) is no evidence and changes nothing; and
 * the proof goes only after REVOKE_AFTER_FAILURES such answers in a row that span at least
 * REVOKE_AFTER_MS. One check that finds the record ends the streak.
 */

/** A verified domain is looked up again once its last check is this old. */
export const RECHECK_EVERY_MS = 24 * 3_600_000;
/** Answers in a row without the record before the proof goes... */
export const REVOKE_AFTER_FAILURES = 4;
/** ...spanning at least this long (the first to the last): four daily checks, three days. */
export const REVOKE_AFTER_MS = 3 * 24 * 3_600_000;

export interface ProofStreak {
  failures: number;
  /** When the first failure of the streak was (epoch ms); null when there is none. */
  failingSince: number | null;
}

/** What the lookup found: the record, none of ours, another token, or no answer at all. */
export type RecheckFinding = 'found' | 'missing' | 'wrong_token' | 'lookup_failed';

export type RecheckVerdict =
  /** The record is there: the proof stands, any streak ends. */
  | { action: 'kept'; streak: ProofStreak }
  /** No answer: no evidence either way; the streak stays as it was and the domain is tried again soon. */
  | { action: 'inconclusive'; streak: ProofStreak }
  /** Another answer without the record: counted, the proof stands for now. */
  | { action: 'strike'; streak: ProofStreak; revokeFrom: number }
  /** The streak is long enough in number and in time: the proof goes. */
  | { action: 'revoke'; streak: ProofStreak };

const NONE: ProofStreak = { failures: 0, failingSince: null };

export function decideRecheck(streak: ProofStreak, finding: RecheckFinding, now: number): RecheckVerdict {
  if (finding === 'found') return { action: 'kept', streak: NONE };
  if (finding === 'lookup_failed') return { action: 'inconclusive', streak };
  const next = { failures: streak.failures + 1, failingSince: streak.failingSince ?? now };
  if (next.failures >= REVOKE_AFTER_FAILURES && now - next.failingSince >= REVOKE_AFTER_MS) return { action: 'revoke', streak: next };
  return { action: 'strike', streak: next, revokeFrom: next.failingSince + REVOKE_AFTER_MS };
}

/**
 * The life of a custom tracking host, as pure rules over a clock's instants (no I/O): its states,
 * when a certificate is renewed, and how long a failure waits before the next try.
 *
 *   pending_dns ──CNAME found──► issuing ──certificate──► active ──1/3 of lifetime left──► renewing
 *        ▲   │                      │                       ▲                                  │
 *        │   └──no CNAME (retries)──┘                       └──────────new certificate──────────┘
 *        └──────── failed (reason in words; retried on the back-off, or at once on a verify) ◄── any
 *
 * A renewal that fails leaves the host serving its current certificate (state renewing, reason
 * set) until that certificate is past its end: then the host is failed and links stop using it.
 */
export const DOMAIN_STATES = ['pending_dns', 'issuing', 'active', 'renewing', 'failed'] as const;
export type DomainState = (typeof DOMAIN_STATES)[number];

/** States in which the host has a valid certificate and links may use it. */
export const SERVING_STATES: readonly DomainState[] = ['active', 'renewing'];

/** How long before a pending CNAME is looked up again: DNS changes take minutes to propagate. */
export const DNS_RECHECK_MS = 5 * 60_000;

/** Back-off after failures in a row: 1 min, 2, 4, … capped at 6 h (a CA rate limit is per hour). */
export function backoffMs(attempts: number): number {
  const n = Math.max(0, Math.min(attempts - 1, 20));
  return Math.min(60_000 * 2 ** n, 6 * 3_600_000);
}

/**
 * When a certificate valid from notBefore to notAfter is renewed: when less than a third of its
 * lifetime is left (Let's Encrypt's advice for 90-day certificates: renew at 60 days).
 */
export function renewAt(notBefore: number, notAfter: number): number {
  return notAfter - Math.floor((notAfter - notBefore) / 3);
}

/** After a certificate is stored: active, and looked at again when it is due for renewal. */
export function afterIssued(cert: { notBefore: number; notAfter: number }): { state: DomainState; nextAttemptAt: number } {
  return { state: 'active', nextAttemptAt: renewAt(cert.notBefore, cert.notAfter) };
}

/**
 * After a failed step: the state to show and when to try again. A host that still holds a valid
 * certificate keeps serving it (renewing); one without is pending_dns (no CNAME yet) or failed.
 */
export function afterFailure(
  d: { state: DomainState; attempts: number; notAfter: number | null },
  now: number,
  step: 'dns' | 'issue',
): { state: DomainState; attempts: number; nextAttemptAt: number } {
  const attempts = d.attempts + 1;
  const stillValid = d.notAfter !== null && d.notAfter > now;
  if (stillValid) return { state: 'renewing', attempts, nextAttemptAt: Math.min(now + backoffMs(attempts), d.notAfter!) };
  if (step === 'dns' && d.state === 'pending_dns') return { state: 'pending_dns', attempts, nextAttemptAt: now + Math.max(DNS_RECHECK_MS, backoffMs(attempts)) };
  return { state: 'failed', attempts, nextAttemptAt: now + backoffMs(attempts) };
}

/** What the job does with a host whose next_attempt_at has come. */
export function nextStep(d: { state: DomainState; notAfter: number | null }, now: number): 'verify' | 'issue' | 'expire' {
  // A serving host whose certificate ran out without a renewal: stop using it in links.
  if (SERVING_STATES.includes(d.state) && d.notAfter !== null && d.notAfter <= now) return 'expire';
  // A renewal verifies the CNAME again first: a customer who pointed the name elsewhere must not
  // keep getting certificates from us.
  return d.state === 'issuing' ? 'issue' : 'verify';
}

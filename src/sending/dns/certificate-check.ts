import type { DomainState } from '../../tracking/domains/policy.ts';
import type { DomainCheck } from './domain-health.ts';

/**
 * The certificate of a workspace's custom tracking host (src/tracking/domains/, issued by ACME) as
 * a domain health check: pure, judged at `now` from what the ACME job stored. Links use the host
 * only while it serves a valid certificate (send-context.ts), so a host without one is as broken
 * as a missing CNAME; one whose renewal is failing, or whose certificate ends soon without having
 * been renewed, is broken before its links stop working, which is the point of the alert.
 */

/** What the ACME job stored for the host (tracking_domain). */
export interface CertificateFacts {
  state: DomainState;
  /** Why it is not (or soon not) serving, in the job's words; null when all is well. */
  reason: string | null;
  notAfter: number | null;
}

/**
 * A certificate ending within this long is a finding even with no failure recorded: renewal
 * starts with a third of the lifetime left (30 days of Let's Encrypt's 90), so by now a renewal
 * should have succeeded.
 */
export const EXPIRY_WARNING_MS = 14 * 86_400_000;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function certificateCheck(host: string, cert: CertificateFacts, now: number): DomainCheck {
  const base = { kind: 'certificate' as const, name: host };
  const serving = (cert.state === 'active' || cert.state === 'renewing') && cert.notAfter !== null && cert.notAfter > now;
  if (!serving) {
    const why =
      cert.reason ??
      (cert.state === 'pending_dns' ? `no certificate yet: it is requested once the CNAME of ${host} points here` : cert.notAfter !== null && cert.notAfter <= now ? `the certificate ended on ${day(cert.notAfter)}` : 'no certificate yet: it is being obtained');
    return { ...base, status: 'missing', published: [], differences: [why, `tracking links use the server's public address until ${host} has a certificate`] };
  }
  const until = `valid until ${day(cert.notAfter!)}`;
  const left = cert.notAfter! - now;
  const differences: string[] = [];
  if (cert.reason !== null) differences.push(`renewal is failing: ${cert.reason}`);
  if (left <= EXPIRY_WARNING_MS) differences.push(`the certificate ends in ${Math.max(1, Math.floor(left / 86_400_000))} day(s), on ${day(cert.notAfter!)}, and has not been renewed`);
  if (differences.length) return { ...base, status: 'differs', published: [until], differences: [...differences, `links keep using ${host} until then`] };
  return { ...base, status: 'ok', published: [until], differences: [] };
}

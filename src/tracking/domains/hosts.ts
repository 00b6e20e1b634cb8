import type { Db } from '../../store/store.ts';
import { checkTrackingDomain } from '../links.ts';
import { SERVING_STATES, type DomainState } from './policy.ts';
import { domainOfWorkspace, makeDue, removeDomain, setDomain, type DomainRow, type HostPurpose } from './sql/tracking-domain.ts';

/**
 * A workspace's custom tracking host as its admins set it and see it (the API's routes call these;
 * the job in domain-job.ts does the rest). Results, not HTTP: api/ maps them.
 */
export interface TrackingHostView {
  host: string;
  state: DomainState;
  /** Why the host is not (or soon not) serving, in plain words; null when all is well. */
  reason: string | null;
  /** The name the host must be a CNAME to. */
  cnameTarget: string;
  /** The certificate served (or last served): its validity, and when it was stored (issued or renewed). */
  certificate: { notBefore: string; notAfter: string; issuedAt: string | null } | null;
  /** When the job looks at the host next (verify, issue, renew, or try again). */
  nextCheckAt: string;
}

export function hostView(row: DomainRow, publicHost: string): TrackingHostView {
  return {
    host: row.host,
    state: row.state,
    reason: row.reason,
    cnameTarget: publicHost,
    certificate:
      row.notBefore !== null && row.notAfter !== null
        ? { notBefore: new Date(row.notBefore).toISOString(), notAfter: new Date(row.notAfter).toISOString(), issuedAt: row.issuedAt === null ? null : new Date(row.issuedAt).toISOString() }
        : null,
    nextCheckAt: new Date(row.nextAttemptAt).toISOString(),
  };
}

export type SetHostResult =
  | { ok: true; row: DomainRow; changed: boolean }
  | { ok: false; why: 'invalid'; message: string }
  | { ok: false; why: 'taken' | 'ours'; message: string };

/**
 * Sets the workspace's host (replacing any other it had, with its certificate). The host is
 * checked as a DNS name; the installation's own public host, or a name under it, is refused (it
 * would hand our name's certificate to a workspace); a host another workspace has is refused.
 */
export async function setTrackingHost(db: Db, workspaceId: string, raw: string, publicHost: string, now: number, purpose: HostPurpose = 'tracking'): Promise<SetHostResult> {
  const c = checkTrackingDomain(raw);
  if (!c.ok) return { ok: false, why: 'invalid', message: c.message };
  const host = c.domain;
  if (host === publicHost || host.endsWith(`.${publicHost}`)) return { ok: false, why: 'ours', message: `${host} is this installation's own name; use a name of your domain, such as track.example.com` };
  const r = await setDomain(db, workspaceId, host, now, purpose);
  if (r === 'taken') return { ok: false, why: 'taken', message: purpose === 'tracking' ? `${host} is already the tracking host of another workspace` : `${host} is already a custom host of a workspace (its tracking or app host)` };
  return { ok: true, row: (await domainOfWorkspace(db, workspaceId, purpose))!, changed: r === 'set' };
}

export async function trackingHost(db: Db, workspaceId: string, purpose: HostPurpose = 'tracking'): Promise<DomainRow | undefined> {
  return domainOfWorkspace(db, workspaceId, purpose);
}

export async function removeTrackingHost(db: Db, workspaceId: string, purpose: HostPurpose = 'tracking'): Promise<boolean> {
  return removeDomain(db, workspaceId, purpose);
}

/** Asks for a check now (after the customer published the CNAME); undefined when no host is set. */
export async function verifyTrackingHost(db: Db, workspaceId: string, now: number, purpose: HostPurpose = 'tracking'): Promise<DomainRow | undefined> {
  if (!(await domainOfWorkspace(db, workspaceId, purpose))) return undefined;
  await makeDue(db, workspaceId, now, purpose);
  return domainOfWorkspace(db, workspaceId, purpose);
}

/**
 * Which tracking host a workspace's links use now, as the sender decides it (send-context.ts reads
 * the same in SQL): its custom host while it serves a certificate, else settings.trackingDomain,
 * else none (the public URL). `waiting` is a custom host set but not serving yet, with why.
 */
export function linkHost(row: DomainRow | undefined, settingsDomain: string | null): { host: string | null; serving: boolean; waiting: { host: string; why: string } | null } {
  if (row && SERVING_STATES.includes(row.state)) return { host: row.host, serving: true, waiting: null };
  const waiting = row ? { host: row.host, why: row.reason ?? (row.state === 'pending_dns' ? 'its CNAME is not verified yet' : 'its certificate is not issued yet') } : null;
  return { host: settingsDomain, serving: false, waiting };
}

import { sql } from 'kysely';
import type { Db, Tx } from '../../../store/store.ts';
import type { DomainState } from '../policy.ts';

/**
 * What a custom host serves (0103_agency.sql): a workspace's tracking links, or the whole app
 * under an agency client's own name (white-label). Each workspace has at most one of each.
 */
export type HostPurpose = 'tracking' | 'app';

/** A workspace's custom host as stored (0034_tracking_domains.sql); times in epoch ms. */
export interface DomainRow {
  workspaceId: string;
  purpose: HostPurpose;
  host: string;
  state: DomainState;
  reason: string | null;
  attempts: number;
  nextAttemptAt: number;
  sealedCert: Buffer | null;
  notBefore: number | null;
  notAfter: number | null;
  certVersion: number;
  /** When the current certificate was stored (issued or last renewed); 0041. */
  issuedAt: number | null;
  updatedAt: number;
}

type Raw = {
  workspace_id: string; purpose: HostPurpose; host: string; state: DomainState; reason: string | null; attempts: number; next_attempt_at: Date;
  sealed_cert: Buffer | Uint8Array | null; not_before: Date | null; not_after: Date | null; cert_version: number; issued_at: Date | null; updated_at: Date;
};

const ms = (d: Date | null) => (d === null ? null : new Date(d).getTime());
function fromRaw(r: Raw): DomainRow {
  return {
    workspaceId: r.workspace_id, purpose: r.purpose, host: r.host, state: r.state, reason: r.reason, attempts: Number(r.attempts),
    nextAttemptAt: ms(r.next_attempt_at)!, sealedCert: r.sealed_cert === null ? null : Buffer.from(r.sealed_cert),
    notBefore: ms(r.not_before), notAfter: ms(r.not_after), certVersion: Number(r.cert_version), issuedAt: ms(r.issued_at), updatedAt: ms(r.updated_at)!,
  };
}

// -- name: domain-of-workspace
export async function domainOfWorkspace(db: Db | Tx, workspaceId: string, purpose: HostPurpose = 'tracking'): Promise<DomainRow | undefined> {
  const r = await sql<Raw>`select * from tracking_domain where workspace_id = ${workspaceId} and purpose = ${purpose}`.execute(db);
  return r.rows[0] && fromRaw(r.rows[0]);
}

// -- name: domain-by-host
export async function domainByHost(db: Db | Tx, host: string): Promise<DomainRow | undefined> {
  const r = await sql<Raw>`select * from tracking_domain where host = ${host}`.execute(db);
  return r.rows[0] && fromRaw(r.rows[0]);
}

// -- name: set-domain
// Sets (or replaces) the workspace's host, pending its CNAME; due at once. The same host set again
// keeps its certificate and state. Another workspace's host is refused by the unique index: the
// caller checks first and answers CONFLICT; the index settles a race.
export async function setDomain(db: Db | Tx, workspaceId: string, host: string, now: number, purpose: HostPurpose = 'tracking'): Promise<'set' | 'unchanged' | 'taken'> {
  const other = await domainByHost(db, host);
  if (other && (other.workspaceId !== workspaceId || other.purpose !== purpose)) return 'taken';
  if (other) return 'unchanged';
  const at = new Date(now);
  try {
    await sql`
      insert into tracking_domain (workspace_id, purpose, host, state, next_attempt_at, created_at, updated_at)
      values (${workspaceId}, ${purpose}, ${host}, 'pending_dns', ${at}, ${at}, ${at})
      on conflict (workspace_id, purpose) do update set host = excluded.host, state = 'pending_dns', reason = null, attempts = 0,
        next_attempt_at = excluded.next_attempt_at, sealed_cert = null, not_before = null, not_after = null, issued_at = null,
        cert_version = tracking_domain.cert_version + 1, updated_at = excluded.updated_at`.execute(db);
  } catch (e) {
    if ((e as { code?: string }).code === '23505') return 'taken';
    throw e;
  }
  return 'set';
}

// -- name: remove-domain
export async function removeDomain(db: Db | Tx, workspaceId: string, purpose: HostPurpose = 'tracking'): Promise<boolean> {
  const r = await sql`delete from tracking_domain where workspace_id = ${workspaceId} and purpose = ${purpose}`.execute(db);
  return Number(r.numAffectedRows ?? 0n) > 0;
}

// -- name: make-due
// A "verify now" from the API: the job looks at the host at its next pass, failures forgotten.
export async function makeDue(db: Db | Tx, workspaceId: string, now: number, purpose: HostPurpose = 'tracking'): Promise<void> {
  await sql`update tracking_domain set next_attempt_at = ${new Date(now)}, attempts = 0 where workspace_id = ${workspaceId} and purpose = ${purpose}`.execute(db);
}

// -- name: due-domains
export async function dueDomains(db: Db | Tx, now: number, limit: number): Promise<DomainRow[]> {
  const r = await sql<Raw>`select * from tracking_domain where next_attempt_at <= ${new Date(now)} order by next_attempt_at limit ${limit}`.execute(db);
  return r.rows.map(fromRaw);
}

// -- name: update-state
// A step's outcome, written only if the row is still the one the step read (same host and
// certificate version): a host removed or replaced meanwhile is left as the API made it.
export async function updateState(
  db: Db | Tx,
  d: Pick<DomainRow, 'workspaceId' | 'host' | 'certVersion'>,
  set: { state: DomainState; reason: string | null; attempts: number; nextAttemptAt: number },
  now: number,
): Promise<boolean> {
  const r = await sql`
    update tracking_domain set state = ${set.state}, reason = ${set.reason}, attempts = ${set.attempts},
      next_attempt_at = ${new Date(set.nextAttemptAt)}, updated_at = ${new Date(now)}
    where workspace_id = ${d.workspaceId} and host = ${d.host} and cert_version = ${d.certVersion}`.execute(db);
  return Number(r.numAffectedRows ?? 0n) > 0;
}

// -- name: store-certificate
export async function storeCertificate(
  db: Db | Tx,
  d: Pick<DomainRow, 'workspaceId' | 'host' | 'certVersion'>,
  cert: { sealed: Buffer; notBefore: number; notAfter: number; nextAttemptAt: number },
  now: number,
): Promise<boolean> {
  const r = await sql`
    update tracking_domain set state = 'active', reason = null, attempts = 0, sealed_cert = ${cert.sealed},
      not_before = ${new Date(cert.notBefore)}, not_after = ${new Date(cert.notAfter)}, cert_version = cert_version + 1, issued_at = ${new Date(now)},
      next_attempt_at = ${new Date(cert.nextAttemptAt)}, updated_at = ${new Date(now)}
    where workspace_id = ${d.workspaceId} and host = ${d.host} and cert_version = ${d.certVersion}`.execute(db);
  return Number(r.numAffectedRows ?? 0n) > 0;
}

// -- name: host-versions
// What the HTTPS listeners compare with what they hold: every custom host (the guard keeps the
// app's own routes off all of them, serving or not), and whether its certificate may be served,
// with its version. Cheap (no sealed bytes), read every few seconds.
export async function hostVersions(db: Db | Tx): Promise<Array<{ host: string; workspaceId: string; purpose: HostPurpose; certVersion: number; serving: boolean }>> {
  const r = await sql<{ host: string; workspace_id: string; purpose: HostPurpose; cert_version: number; serving: boolean }>`
    select host, workspace_id, purpose, cert_version, (state in ('active', 'renewing') and sealed_cert is not null) as serving
      from tracking_domain`.execute(db);
  return r.rows.map((x) => ({ host: x.host, workspaceId: x.workspace_id, purpose: x.purpose, certVersion: Number(x.cert_version), serving: x.serving }));
}

/**
 * The DNS proof that a workspace owns an email domain it admits to single sign-on
 * (0116_sso_domain_proof.sql). Listing a domain issues a token; the admin publishes
 *
 *   _cadenza-sso.<domain>  TXT  "cadenza-sso=<token>"
 *
 * and asks for a check. Only a proven domain admits newcomers just in time, finds its workspace
 * from a sign-in address, and lets a member who also belongs to other workspaces sign in here
 * (flow.ts): whoever controls a domain's DNS controls its mail, so could reset those accounts'
 * passwords anyway; a claim nobody checked vouches for nobody.
 *
 * The record is read through the installation's one resolver (the domain checks' TxtResolver,
 * CADENZA_DNS_RESOLVER); domain code returns a result, api/ maps it. A verified domain is looked up
 * again every day by the scheduler (proof-recheck.ts decides, proof-recheck-duty.ts applies).
 */
import { randomBytes } from 'node:crypto';
import type { Db, Tx } from '../../../store/store.ts';
import { lookupTxt, type TxtResolver } from '../../../sending/dns/check.ts';

export const PROOF_LABEL = '_cadenza-sso';
export const PROOF_PREFIX = 'cadenza-sso=';

export interface DomainProof {
  domain: string;
  /** Where the TXT record goes. */
  recordName: string;
  /** What it says. */
  recordValue: string;
  verifiedAt: Date | null;
  checkedAt: Date | null;
  checkError: string | null;
}

type Row = { domain: string; token: string; verified_at: Date | null; checked_at: Date | null; check_error: string | null };

function proofOf(r: Row): DomainProof {
  return { domain: r.domain, recordName: `${PROOF_LABEL}.${r.domain}`, recordValue: `${PROOF_PREFIX}${r.token}`, verifiedAt: r.verified_at, checkedAt: r.checked_at, checkError: r.check_error };
}

// -- name: sso-domain-proofs
export async function domainProofs(db: Db | Tx, workspaceId: string): Promise<DomainProof[]> {
  const rows = await db.selectFrom('workspace_sso_domain').select(['domain', 'token', 'verified_at', 'checked_at', 'check_error']).where('workspace_id', '=', workspaceId).orderBy('domain').execute();
  return rows.map(proofOf);
}

// -- name: sso-domain-verified
/** Whether the workspace has proven the domain. */
export async function isDomainVerified(db: Db | Tx, workspaceId: string, domain: string): Promise<boolean> {
  const r = await db.selectFrom('workspace_sso_domain').select('domain').where('workspace_id', '=', workspaceId).where('domain', '=', domain).where('verified_at', 'is not', null).executeTakeFirst();
  return !!r;
}

// -- name: sso-domain-sync
/**
 * Keeps one proof row per listed domain (in the settings' transaction): a new domain gets a fresh
 * token, a domain no longer listed loses its proof (listed again, it is proven again).
 */
export async function syncDomainProofs(tx: Tx, workspaceId: string, domains: readonly string[]): Promise<void> {
  const existing = await tx.selectFrom('workspace_sso_domain').select('domain').where('workspace_id', '=', workspaceId).execute();
  const have = new Set(existing.map((r) => r.domain));
  const gone = [...have].filter((d) => !domains.includes(d));
  if (gone.length) await tx.deleteFrom('workspace_sso_domain').where('workspace_id', '=', workspaceId).where('domain', 'in', gone).execute();
  const fresh = domains.filter((d) => !have.has(d));
  // 128 random bits: a record published for one workspace must not prove the domain for another.
  if (fresh.length) await tx.insertInto('workspace_sso_domain').values(fresh.map((domain) => ({ workspace_id: workspaceId, domain, token: randomBytes(16).toString('hex') }))).execute();
}

export type ProofFinding = { kind: 'found' } | { kind: 'missing' | 'wrong_token' | 'lookup_failed'; message: string };

/**
 * Looks the domain's record up: found, none of ours, another token, or no answer (a timeout,
 * SERVFAIL: no evidence either way). Shared by the admin's Verify and the daily re-check.
 */
export async function findProofRecord(resolver: TxtResolver, domain: string, token: string): Promise<ProofFinding> {
  const name = `${PROOF_LABEL}.${domain}`;
  const expected = `${PROOF_PREFIX}${token}`;
  const found = await lookupTxt(resolver, name);
  if (!found.ok) return { kind: 'lookup_failed', message: `the DNS lookup of ${name} failed (${found.error}); try again in a few minutes` };
  const ours = found.records.filter((v) => v.trim().startsWith(PROOF_PREFIX));
  if (ours.length === 0) return { kind: 'missing', message: `no TXT record "${PROOF_PREFIX}…" at ${name} yet; publish ${expected} there (DNS changes can take a while to show)` };
  if (!ours.some((v) => v.trim() === expected)) return { kind: 'wrong_token', message: `the TXT record at ${name} holds another token; it must read ${expected}` };
  return { kind: 'found' };
}

export type ProofCheck =
  | { kind: 'verified'; proof: DomainProof }
  | { kind: 'missing' | 'wrong_token' | 'lookup_failed' | 'taken'; proof: DomainProof; message: string }
  | { kind: 'unknown_domain' }
  | { kind: 'no_resolver' };

/**
 * Looks the record up and stores the outcome. A domain already proven by another workspace stays
 * unproven here, whatever DNS says (one workspace per domain, the partial unique index). A domain
 * this workspace has not listed is unknown before anything else is said (another's is not revealed).
 */
export async function checkDomainProof(db: Db, resolver: TxtResolver | undefined, workspaceId: string, domain: string, now: Date): Promise<ProofCheck> {
  const row = await db.selectFrom('workspace_sso_domain').select(['domain', 'token', 'verified_at', 'checked_at', 'check_error']).where('workspace_id', '=', workspaceId).where('domain', '=', domain).executeTakeFirst();
  if (!row) return { kind: 'unknown_domain' };
  // DNS checks off on this server (CADENZA_DOMAIN_CHECKS=off): nothing can be proven, nothing is changed.
  if (!resolver) return { kind: 'no_resolver' };
  const found = await findProofRecord(resolver, domain, row.token);
  let failure: { kind: 'missing' | 'wrong_token' | 'lookup_failed' | 'taken'; message: string } | undefined = found.kind === 'found' ? undefined : found;
  if (!failure) {
    const taken = await db.selectFrom('workspace_sso_domain').select('workspace_id').where('domain', '=', domain).where('workspace_id', '!=', workspaceId).where('verified_at', 'is not', null).executeTakeFirst();
    if (taken) failure = { kind: 'taken', message: `${domain} is already proven by another workspace of this installation; a domain signs in to one workspace only` };
  }
  const updated = await db
    .updateTable('workspace_sso_domain')
    // A person's check decides at once either way, and ends any streak of the daily re-check (0130).
    .set({ checked_at: now, failures: 0, failing_since: null, ...(failure ? { check_error: failure.message, verified_at: null } : { check_error: null, verified_at: row.verified_at ?? now }) })
    .where('workspace_id', '=', workspaceId)
    .where('domain', '=', domain)
    .returning(['domain', 'token', 'verified_at', 'checked_at', 'check_error'])
    .executeTakeFirstOrThrow();
  return failure ? { ...failure, proof: proofOf(updated) } : { kind: 'verified', proof: proofOf(updated) };
}

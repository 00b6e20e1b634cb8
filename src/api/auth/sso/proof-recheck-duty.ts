/**
 * The daily re-check of verified SSO domains (scheduler role, src/app/app.ts; 0130): every hour
 * the pass looks for verified domains last checked a day ago or more, looks each TXT record up
 * through the installation's resolver (the one the domain checks and the admins' Verify use), and
 * applies what proof-recheck.ts decides. A proof that goes is, in one transaction: the domain
 * unverified (it admits nobody new, finds no workspace from a sign-in address), its workspace's
 * admins told (a notification of kind sso_attention, which the API's fan-out hands to admins and
 * owners only), and the audit log's entry (settings.changed, by Cadenza). One process runs a pass:
 * it holds the `sso-domain-proof` lease, renewed between domains. Each write names the token it
 * read and needs the proof still there, so a domain an admin removed, listed anew or unproved
 * meanwhile is left as the admin made it.
 */
import { sql } from 'kysely';
import type { Clock } from '../../../common/clock.ts';
import type { Logger } from '../../../common/logger.ts';
import { runEvery, type Periodic } from '../../../common/periodic.ts';
import type { Random } from '../../../common/random.ts';
import { Leases } from '../../../ops/leases.ts';
import type { TxtResolver } from '../../../sending/dns/check.ts';
import type { Store } from '../../../store/store.ts';
import { recordAudit, SYSTEM_ACTOR } from '../../audit/audit-log.ts';
import { findProofRecord, PROOF_LABEL, PROOF_PREFIX } from './domain-proof.ts';
import { decideRecheck, RECHECK_EVERY_MS, type RecheckVerdict } from './proof-recheck.ts';

export const SSO_PROOF_LEASE = 'sso-domain-proof';
const LEASE_TTL_MS = 10 * 60_000;
/** How often the pass looks for domains due: a domain whose lookup got no answer is tried again then. */
export const RECHECK_PASS_EVERY_MS = 3_600_000;

export interface ProofRecheckDeps {
  store: Store;
  clock: Clock;
  random: Random;
  resolver: TxtResolver;
  /** This process, as the lease owner. */
  owner: string;
  log?: Logger;
}

export interface RecheckResult {
  workspaceId: string;
  domain: string;
  verdict: RecheckVerdict;
}

type Due = { workspace_id: string; domain: string; token: string; verified_at: Date; failures: number; failing_since: Date | null };

// -- name: sso-domain-proofs-due
// Verified domains whose last check (or proof) is a day old or more, oldest first.
const dueSql = (now: number) => sql<Due>`
  select workspace_id, domain, token, verified_at, failures, failing_since from workspace_sso_domain
  where verified_at is not null and coalesce(checked_at, verified_at) <= ${new Date(now - RECHECK_EVERY_MS)}
  order by coalesce(checked_at, verified_at), workspace_id, domain limit 500`;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** One pass at the clock's now. Null when another process holds the lease; else what each domain due came to. */
export async function recheckSsoDomains(d: ProofRecheckDeps): Promise<RecheckResult[] | null> {
  const leases = new Leases(d.store, d.clock);
  let lease = await leases.acquire(SSO_PROOF_LEASE, d.owner, LEASE_TTL_MS);
  if (!lease) return null;
  try {
    const out: RecheckResult[] = [];
    for (const row of (await dueSql(d.clock.now()).execute(d.store.db)).rows) {
      const found = await findProofRecord(d.resolver, row.domain, row.token);
      const now = d.clock.now();
      const streak = { failures: Number(row.failures), failingSince: row.failing_since ? new Date(row.failing_since).getTime() : null };
      const verdict = decideRecheck(streak, found.kind, now);
      const why = found.kind === 'found' ? '' : found.message;
      if (await apply(d, row, verdict, why, now)) out.push({ workspaceId: row.workspace_id, domain: row.domain, verdict });
      lease = await leases.renew(lease, LEASE_TTL_MS);
      if (!lease) return out; // taken over: the other process rechecks the rest
    }
    return out;
  } finally {
    if (lease) await leases.release(lease).catch(() => undefined);
  }
}

/** Writes a verdict, only onto the proof the pass read; false when an admin changed it meanwhile. */
async function apply(d: ProofRecheckDeps, row: Due, v: RecheckVerdict, why: string, now: number): Promise<boolean> {
  const at = new Date(now);
  const name = `${PROOF_LABEL}.${row.domain}`;
  const set = (() => {
    switch (v.action) {
      case 'kept':
        return { checked_at: at, check_error: null, failures: 0, failing_since: null };
      // No answer: not counted, and not dated, so the next hourly pass tries again.
      case 'inconclusive':
        return { check_error: `the daily re-check got no answer: ${why}`.slice(0, 500) };
      case 'strike':
        return {
          checked_at: at,
          check_error: `the daily re-check did not find the record (${v.streak.failures} in a row since ${day(v.streak.failingSince!)}): ${why}; still verified, until ${day(v.revokeFrom)} at the earliest`.slice(0, 500),
          failures: v.streak.failures,
          failing_since: new Date(v.streak.failingSince!),
        };
      case 'revoke':
        return {
          verified_at: null,
          checked_at: at,
          check_error: `no longer verified: the daily re-check has not found ${PROOF_PREFIX}${row.token} at ${name} since ${day(v.streak.failingSince!)} (${v.streak.failures} checks in a row); publish it again, then Verify`.slice(0, 500),
          failures: 0,
          failing_since: null,
        };
    }
  })();
  return d.store.db.transaction().execute(async (tx) => {
    const r = await tx
      .updateTable('workspace_sso_domain')
      .set(set)
      .where('workspace_id', '=', row.workspace_id)
      .where('domain', '=', row.domain)
      .where('token', '=', row.token)
      .where('verified_at', 'is not', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    if (v.action === 'revoke') {
      const since = day(v.streak.failingSince!);
      await tx
        .insertInto('notification_event')
        .values({
          workspace_id: row.workspace_id,
          source_key: `sso-domain:${row.domain}:${now}`,
          kind: 'sso_attention',
          user_id: null,
          title: `${row.domain} is no longer verified for single sign-on`,
          body: `The TXT record ${name} has not been found since ${since}, so nobody new joins by ${row.domain} addresses. Publish ${PROOF_PREFIX}${row.token} there again, then press Verify under Settings → Single sign-on.`,
          link: '/settings',
          occurred_at: at,
        })
        // No conflict target: naming one needs SELECT on it, which the scheduler has not (db-grants.ts).
        .onConflict((oc) => oc.doNothing())
        .execute();
      await recordAudit(tx, { clock: d.clock, random: d.random }, {
        workspaceId: row.workspace_id,
        action: 'settings.changed',
        actor: SYSTEM_ACTOR,
        target: 'sso',
        detail: { domainUnverified: row.domain, reason: 'daily re-check', failures: v.streak.failures, failingSince: new Date(v.streak.failingSince!).toISOString() },
      });
      d.log?.warn({ workspaceId: row.workspace_id, domain: row.domain, failures: v.streak.failures, since }, 'sso domain proof revoked: its TXT record is gone');
    }
    return true;
  });
}

/** The duty: a pass now, then every `everyMs` (default 1 h); `onPass` sees each pass's results. */
export function startSsoProofRecheck(d: ProofRecheckDeps & { everyMs?: number; onPass?: (r: RecheckResult[] | null) => void }): Periodic {
  return runEvery(
    d.clock,
    d.everyMs ?? RECHECK_PASS_EVERY_MS,
    // The pass first, then onPass: `d.onPass?.(await …)` would skip the pass itself when onPass is absent.
    async () => {
      const r = await recheckSsoDomains(d);
      d.onPass?.(r);
    },
    (e) => d.log?.error({ err: e instanceof Error ? e.message : String(e) }, 'sso domain re-check failed'),
  );
}

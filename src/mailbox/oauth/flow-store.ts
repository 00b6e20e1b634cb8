import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../store/store.ts';
import type { OAuthFlowTable } from '../../store/schema.ts';

/**
 * The oauth_flow table's queries (0007_oauth.sql; 0059 adds the CRM connect flows, src/crm/oauth/).
 * Each callback consumes only the flows of its own providers: a CRM state brought to the mailbox
 * callback (or the reverse) reads as unknown and is left for its own.
 */

export type FlowRow = Selectable<OAuthFlowTable>;

export async function saveFlow(db: Db, row: Insertable<OAuthFlowTable>): Promise<void> {
  await db.insertInto('oauth_flow').values(row).execute();
}

export type Consumed = { ok: true; flow: FlowRow } | { ok: false; reason: 'unknown' | 'used' | 'expired' | 'other_session' };

// -- name: consume-flow
// Single use in one statement: of two callbacks racing with one state, only one sees used_at null.
// A flow bound to a web session is consumed only in that session: a callback link carrying
// someone else's state (login CSRF: their account connected in your workspace) is refused and
// leaves the flow for its own session.
export async function consumeFlow(db: Db, state: string, now: number, sessionHash: string | undefined, providers: readonly FlowRow['provider'][]): Promise<Consumed> {
  const at = new Date(now);
  const flow = await db
    .updateTable('oauth_flow')
    .set({ used_at: at })
    .where('state', '=', state)
    .where('provider', 'in', providers)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .where((eb) => eb.or([eb('session_hash', 'is', null), eb('session_hash', '=', sessionHash ?? '')]))
    .returningAll()
    .executeTakeFirst();
  if (flow) return { ok: true, flow };
  const row = await db.selectFrom('oauth_flow').select(['used_at', 'expires_at', 'session_hash']).where('state', '=', state).where('provider', 'in', providers).executeTakeFirst();
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.used_at) return { ok: false, reason: 'used' };
  if (row.expires_at <= at) return { ok: false, reason: 'expired' };
  return { ok: false, reason: 'other_session' };
}

// -- name: purge-flows
// Kept a day past expiry, so that a late or replayed callback is told "already used" or "expired"
// rather than "unknown".
export async function purgeFlows(db: Db, now: number): Promise<void> {
  await db.deleteFrom('oauth_flow').where('expires_at', '<', new Date(now - 86_400_000)).execute();
}

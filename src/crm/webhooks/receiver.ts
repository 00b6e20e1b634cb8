import type { Db } from '../../store/store.ts';
import type { TokenSealer } from '../connections.ts';
import { verifyBasicAuth, verifyHubSpotV3, type HookVerdict } from './signature.ts';

/**
 * A CRM's webhook delivery as a trigger (docs/crm.md "Changes in"): verified with the connection's
 * sealed secret, then it only moves the connection's wake number (crm_connection.wake_seq, 0060).
 * Nothing in the body is read, trusted or applied: the sync loop of whichever process reads the
 * connection sees the number move and reads from its stored cursor, with its overlap and its
 * dedupe by version (change-reader.ts), so a forged-but-verified, duplicated, late or out-of-order
 * delivery costs one read and changes nothing by itself. Pipedrive's `meta.user_id` names the
 * author, but it is not used either: Cadenza's own writes coming back are told apart by the
 * reader's existing comparison with what Cadenza last wrote (apply-changes.ts).
 */

/** The basic-auth user Cadenza registers its Pipedrive webhooks with; the password is the connection's secret. */
export const PIPEDRIVE_HOOK_USER = 'cadenza';

/** The associated data the webhook secret is sealed under: it opens for this connection only. */
export const hookContext = (connectionId: string) => `crm-hook:${connectionId}`;

export interface HookRequest {
  method: string;
  /** The full URL the CRM posted to, as configured there (HubSpot signs it). */
  uri: string;
  /** The raw body, as received (HubSpot signs the exact bytes). */
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

export type HookOutcome =
  | { outcome: 'woken' }
  /** No such connection, or none that takes webhooks: answered as if the route did not exist. */
  | { outcome: 'unknown' }
  | { outcome: 'refused'; reason: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function receiveHook(d: { db: Db; sealer: TokenSealer; now: number }, connectionId: string, req: HookRequest): Promise<HookOutcome> {
  if (!UUID.test(connectionId)) return { outcome: 'unknown' };
  const c = await d.db.selectFrom('crm_connection').select(['workspace_id', 'kind', 'hook_secret']).where('id', '=', connectionId).executeTakeFirst();
  if (!c || c.hook_secret === null || (c.kind !== 'hubspot' && c.kind !== 'pipedrive')) return { outcome: 'unknown' };
  const secret = await d.sealer.open(c.workspace_id, hookContext(connectionId), c.hook_secret);
  const verdict = verify(c.kind, secret, req, d.now);
  if (!verdict.ok) return { outcome: 'refused', reason: verdict.reason };
  await d.db
    .updateTable('crm_connection')
    .set((eb) => ({ wake_seq: eb('wake_seq', '+', 1), hook_verified_at: new Date(d.now) }))
    .where('id', '=', connectionId)
    .execute();
  return { outcome: 'woken' };
}

function verify(kind: 'hubspot' | 'pipedrive', secret: string, req: HookRequest, now: number): HookVerdict {
  const h = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  if (kind === 'pipedrive') return verifyBasicAuth(PIPEDRIVE_HOOK_USER, secret, h('authorization'));
  return verifyHubSpotV3(secret, { method: req.method, uri: req.uri, body: req.body, signature: h('x-hubspot-signature-v3'), timestamp: h('x-hubspot-request-timestamp') }, now);
}

import type { Db } from '../../store/store.ts';
import type { TokenSealer } from '../connections.ts';
import { verifyBasicAuth, verifyHubSpotV3, type HookVerdict } from './signature.ts';

/**
 * A CRM's webhook delivery as a trigger (docs/crm.md "Changes in"): verified with the connection's
 * sealed secret, then it only moves the connection's wake number (crm_connection.wake_seq, 0060).
 * Nothing in the body is read, trusted or applied: the sync loop of whichever process reads the
 * connection sees the number move and reads from its stored cursor, with its overlap and its
 * dedupe by version (change-reader.ts), so a forged-but-verified, duplicated, late or out-of-order
 * delivery costs one read and changes nothing by itself.
 *
 * One field is looked at, and only to spare a read: Pipedrive's `meta.user_id`, the author. A
 * verified delivery whose author is the connection's own integration user is Cadenza's write
 * coming back (its field writes, fields-out.ts) and wakes nothing ('own'): without this, each read
 * that writes fields would cause another read. Skipping it cannot lose a change, since the reader
 * ignores that user's changes anyway (apply-changes.ts), and a delivery naming another author
 * still only wakes the reader. HubSpot names no author in its events; its echoes cost a read each.
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
  /** Verified, and authored by the connection's integration user (Pipedrive): 2xx, no wake. */
  | { outcome: 'own' }
  /** No such connection, or none that takes webhooks: answered as if the route did not exist. */
  | { outcome: 'unknown' }
  | { outcome: 'refused'; reason: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function receiveHook(d: { db: Db; sealer: TokenSealer; now: number }, connectionId: string, req: HookRequest): Promise<HookOutcome> {
  if (!UUID.test(connectionId)) return { outcome: 'unknown' };
  const c = await d.db.selectFrom('crm_connection').select(['workspace_id', 'kind', 'hook_secret', 'integration_user_id']).where('id', '=', connectionId).executeTakeFirst();
  if (!c || c.hook_secret === null || (c.kind !== 'hubspot' && c.kind !== 'pipedrive')) return { outcome: 'unknown' };
  const secret = await d.sealer.open(c.workspace_id, hookContext(connectionId), c.hook_secret);
  const verdict = verify(c.kind, secret, req, d.now);
  if (!verdict.ok) return { outcome: 'refused', reason: verdict.reason };
  if (c.kind === 'pipedrive' && c.integration_user_id !== null && pipedriveAuthor(req.body) === c.integration_user_id) return { outcome: 'own' };
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

/** Pipedrive's meta.user_id (webhooks v2; v1 has it in meta too), as a string; null when the body has none. */
function pipedriveAuthor(body: string): string | null {
  try {
    const id = (JSON.parse(body) as { meta?: { user_id?: unknown } } | null)?.meta?.user_id;
    return typeof id === 'number' || typeof id === 'string' ? String(id) : null;
  } catch {
    return null;
  }
}

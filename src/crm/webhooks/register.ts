import { randomBytes } from 'node:crypto';
import type { Db } from '../../store/store.ts';
import type { TokenSealer } from '../connections.ts';
import type { CrmConnector } from '../connector.ts';
import { hookContext, PIPEDRIVE_HOOK_USER } from './receiver.ts';

/**
 * Registering Cadenza's webhooks with a CRM whose API allows it (Pipedrive: POST /v1/webhooks), so
 * that its changes wake the reader at once (receiver.ts). HubSpot's webhooks belong to the app, not
 * to an account: its admin sets the target URL and gives Cadenza the app's client secret
 * (setHookSecret); nothing is registered here for it. Salesforce has its change events
 * (salesforce/cdc.ts), Twenty is polled.
 *
 * Needs the public URL (CADENZA_PUBLIC_URL); without one nothing is registered and polling alone
 * goes on. One process registers: the claim is the conditional update of hooks_registered_at.
 */
export interface CrmHookRegistrar {
  /** Creates the webhooks for persons and deals; returns their ids. */
  registerWebhooks(url: string, auth: { user: string; password: string }): Promise<string[]>;
  /** Deletes one; an id the CRM no longer knows is not an error. */
  deleteWebhook(id: string): Promise<void>;
}

export function registersWebhooks(c: CrmConnector): c is CrmConnector & CrmHookRegistrar {
  return typeof (c as Partial<CrmHookRegistrar>).registerWebhooks === 'function';
}

/** The receiver's URL for a connection (server.ts mounts it). */
export const hookUrl = (publicUrl: string, connectionId: string) => `${publicUrl.replace(/\/+$/, '')}/hooks/crm/${connectionId}`;

export type RegisterResult = { kind: 'registered'; ids: string[] } | { kind: 'not_needed' } | { kind: 'failed'; error: string };

export async function registerHooks(d: { db: Db; sealer: TokenSealer; now: number }, connectionId: string, connector: CrmConnector, publicUrl: string): Promise<RegisterResult> {
  if (!registersWebhooks(connector)) return { kind: 'not_needed' };
  const claimed = await d.db
    .updateTable('crm_connection')
    .set({ hooks_registered_at: new Date(d.now) })
    .where('id', '=', connectionId)
    .where('state', '=', 'active')
    .where('hooks_registered_at', 'is', null)
    .returning(['workspace_id', 'hook_ids'])
    .executeTakeFirst();
  if (!claimed) return { kind: 'not_needed' };
  try {
    // Those of an earlier registration (before a pause, or a token change) would otherwise deliver
    // with a password no longer kept: deleted first.
    for (const id of claimed.hook_ids ?? []) await connector.deleteWebhook(id);
    // 256 bits from the OS, not the seeded random source: it is a secret.
    const secret = randomBytes(32).toString('base64url');
    const ids = await connector.registerWebhooks(hookUrl(publicUrl, connectionId), { user: PIPEDRIVE_HOOK_USER, password: secret });
    await d.db
      .updateTable('crm_connection')
      .set({ hook_secret: await d.sealer.seal(claimed.workspace_id, hookContext(connectionId), secret), hook_ids: JSON.stringify(ids), hook_error: null })
      .where('id', '=', connectionId)
      .execute();
    return { kind: 'registered', ids };
  } catch (e) {
    const error = (e instanceof Error ? e.message : String(e)).slice(0, 1000);
    await d.db.updateTable('crm_connection').set({ hooks_registered_at: null, hook_error: error }).where('id', '=', connectionId).execute();
    return { kind: 'failed', error };
  }
}

/** HubSpot: the app's client secret, which signs its deliveries (v3), sealed; null removes it (polling alone). */
export async function setHookSecret(d: { db: Db; sealer: TokenSealer }, workspaceId: string, connectionId: string, secret: string | null): Promise<void> {
  await d.db
    .updateTable('crm_connection')
    .set({ hook_secret: secret === null ? null : await d.sealer.seal(workspaceId, hookContext(connectionId), secret), ...(secret === null ? { hook_verified_at: null } : {}) })
    .where('id', '=', connectionId)
    .where('workspace_id', '=', workspaceId)
    .execute();
}

import * as oauth from 'oauth4webapi';
import { parseMailboxSettings } from '../../mailbox/settings.ts';
import type { TaskContext } from './task-context.ts';

/**
 * Ends a removed mailbox's OAuth grant at its provider (RFC 7009), from the sealed token its
 * credential's deletion left in the task (0046_credential_task.sql):
 *
 *   revoked      the provider took it: the grant and its access tokens are dead (Google);
 *   unsupported  no OAuth client here for that provider, or the provider has no revocation
 *                endpoint (Microsoft publishes none): nothing to retry;
 *   throws       the provider did not answer or refused: the runner retries with backoff.
 */
export type Revocation = 'revoked' | 'unsupported';

export async function runRevocation(c: TaskContext, t: { workspaceId: string; mailboxId: string; sealed: Buffer }): Promise<Revocation> {
  const credential = await c.vault.openCredential(t.workspaceId, t.mailboxId, t.sealed);
  if (credential.kind !== 'oauth') return 'unsupported';
  const row = await c.store.db.selectFrom('mailbox').select(['provider', 'settings']).where('id', '=', t.mailboxId).executeTakeFirst();
  const settings = parseMailboxSettings(row?.settings);
  const provider = settings.oauth?.provider ?? (row?.provider === 'gmail' ? 'google' : row?.provider === 'graph' ? 'microsoft' : undefined);
  if (!provider || !c.oauthClients) return 'unsupported';
  const client = await c.oauthClients.get(provider);
  if (!client.as.revocation_endpoint) return 'unsupported';
  // The refresh token: revoking it ends the grant, and its access tokens with it (Google).
  const token = credential.refreshToken ?? credential.accessToken;
  const ro = client.requestOptions();
  try {
    const res = await oauth.revocationRequest(client.as, client.client, client.auth, token, ro);
    await oauth.processRevocationResponse(res);
  } finally {
    ro.cancel();
  }
  return 'revoked';
}

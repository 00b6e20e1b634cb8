import * as oauth from 'oauth4webapi';
import { parseMailboxSettings } from '../../mailbox/settings.ts';
import type { TaskContext } from './task-context.ts';

/**
 * Ends a removed mailbox's OAuth grant at its provider (RFC 7009), from the sealed token its
 * credential's deletion left in the task (0046_credential_task.sql):
 *
 *   revoked          the provider took it: the grant and its access tokens are dead (Google);
 *   already_revoked  the provider says the token is invalid (Google answers 400 invalid_token for
 *                    a token expired or revoked, where RFC 7009 §2.2 would answer 200): the grant
 *                    is already dead (the user revoked it, or it lapsed), nothing to retry;
 *   unsupported      no OAuth client here for that provider, the provider has no revocation
 *                    endpoint (Microsoft publishes none), or it takes no such token
 *                    (unsupported_token_type): nothing to retry;
 *   throws           the provider did not answer or refused otherwise (a 5xx, invalid_client after
 *                    a secret's rotation): the runner retries with backoff, so an operator who
 *                    fixes the client's settings within hours still sees the grant revoked.
 */
export type Revocation = 'revoked' | 'already_revoked' | 'unsupported';

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
  } catch (e) {
    if (e instanceof oauth.ResponseBodyError && e.error === 'invalid_token') return 'already_revoked';
    if (e instanceof oauth.ResponseBodyError && e.error === 'unsupported_token_type') return 'unsupported';
    throw e;
  } finally {
    ro.cancel();
  }
  return 'revoked';
}

import { randomBytes } from 'node:crypto';
import type { Store, Tx } from '../../store/store.ts';

/**
 * Webhook signing secrets at rest (promise 7, 0013_webhook_secret_sealed.sql): sealed with the
 * workspace's data key through the vault, as mailbox credentials are, and bound to their endpoint
 * (associated data 'webhook:<id>'). The plaintext exists in two places only: the answer to the
 * request that made it (create, rotate: shown once), and the dispatcher at signing time.
 * `cadenza keys rotate` rewraps the data keys, so sealed secrets need no re-encryption.
 */

/** What the webhook code needs of the vault (src/mailbox/vault.ts Vault implements it). */
export interface SecretSealer {
  seal(workspaceId: string, context: string, plaintext: string, tx?: Tx): Promise<Buffer>;
  open(workspaceId: string, context: string, sealed: Buffer): Promise<string>;
}

export const secretContext = (endpointId: string) => `webhook:${endpointId}`;

/** 256 random bits from the OS, not the injected (seedable) random source: it is a secret. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * Seals the secrets 0013 left in clear (legacy_secret) and clears them, in one transaction; run
 * by every process that has the master key, right after the migrations. Returns how many.
 */
export async function sealLegacyWebhookSecrets(store: Store, sealer: SecretSealer): Promise<number> {
  return store.db.transaction().execute(async (tx) => {
    const rows = await tx.selectFrom('webhook_endpoint').select(['id', 'workspace_id', 'legacy_secret']).where('legacy_secret', 'is not', null).forUpdate().execute();
    for (const r of rows) {
      const sealed = await sealer.seal(r.workspace_id, secretContext(r.id), r.legacy_secret!, tx);
      await tx.updateTable('webhook_endpoint').set({ secret_sealed: sealed, legacy_secret: null }).where('id', '=', r.id).execute();
    }
    return rows.length;
  });
}

/** What the dispatcher reads of an endpoint to sign a delivery. */
export interface SealedSecrets {
  endpointId: string;
  workspaceId: string;
  secretSealed: Buffer | null;
  previousSealed: Buffer | null;
  previousExpiresAt: Date | null;
}

/**
 * The secrets a delivery is signed with at `now`: the current one, then the previous one while a
 * rotation's overlap lasts (receivers still holding the old secret keep verifying).
 */
export async function signingSecrets(sealer: SecretSealer, e: SealedSecrets, now: number): Promise<string[]> {
  if (!e.secretSealed) throw new Error('the signing secret is not sealed yet: start Cadenza with the master key once to seal it');
  const ctx = secretContext(e.endpointId);
  const out = [await sealer.open(e.workspaceId, ctx, e.secretSealed)];
  if (e.previousSealed && e.previousExpiresAt && e.previousExpiresAt.getTime() > now) out.push(await sealer.open(e.workspaceId, ctx, e.previousSealed));
  return out;
}

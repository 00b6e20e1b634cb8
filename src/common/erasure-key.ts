import { createHmac } from 'node:crypto';
import { deriveKey } from '../common/secrets.ts';

/**
 * What an erased person leaves in the suppression list: not their address but a keyed hash of it.
 * HMAC-SHA256 with a key derived from the master key (common/secrets.ts deriveKey, purpose
 * 'erasure'), over the workspace and the normalised address (leads/email.ts checkEmail), so:
 * - without the master key nobody can test whether an address was erased (a plain hash of an
 *   address is reversed by hashing a list of addresses);
 * - the same address hashes differently in two workspaces, so the lists cannot be joined;
 * - the marker can never collide with an address: it has no '@'.
 */
export type ErasureKey = Buffer & { readonly __erasureKey: true };

export function erasureKey(master: Buffer): ErasureKey {
  return deriveKey(master, 'erasure') as ErasureKey;
}

export const ERASED_PREFIX = 'erased:';

/** The suppression list's stand-in for an erased address of this workspace. */
export function erasedMarker(key: ErasureKey, workspaceId: string, emailNorm: string): string {
  return ERASED_PREFIX + createHmac('sha256', key).update(`${workspaceId}\n${emailNorm}`).digest('hex');
}

import { cadenzaError } from '../common/errors.ts';
import type { ErasureKey } from '../common/erasure-key.ts';
import type { Db } from '../store/store.ts';
import { findSuppressed } from './sql/find-suppressed.ts';

/**
 * A lead created or given a new address by hand is refused when the address was erased from the
 * workspace (privacy/erase.ts): the person asked to be forgotten, so they are not mailed again.
 * (Imports refuse such rows through findSuppressed with the same key.) Without the key, nothing
 * is checked: the caller runs without the master key.
 */
export async function refuseErased(db: Db, workspaceId: string, emailNorm: string, key: ErasureKey | undefined): Promise<void> {
  if (!key) return;
  const why = (await findSuppressed(db, workspaceId, [emailNorm], key)).get(emailNorm);
  if (why === 'erased') throw cadenzaError('SUPPRESSED', "this address was erased from the workspace at its owner's request and cannot be added again", { field: 'email' });
}

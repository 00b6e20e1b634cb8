import type { Tx } from '../../store/store.ts';
import { acmeAccountsForUpdate, rewrapAcmeAccount } from './sql/acme.ts';

/**
 * The installation's ACME account keys are wrapped by the master key itself (not by a workspace's
 * data key: an account serves every workspace), bound to the CA's directory URL. `cadenza keys
 * rotate` rewraps them beside the workspaces' data keys, in the same transaction, so that the
 * account, and the URL the CA knows it by, outlive a rotation.
 */

/** Wraps and unwraps a key with a master key (mailbox/vault.ts's KeyWrapper); declared here, the user. */
export interface AccountKeyWrapper {
  wrap(key: Buffer, context: string): Buffer;
  unwrap(wrapped: Buffer, context: string): Buffer;
}

/** What an account key is bound to when wrapped: a wrapped key copied to another directory's row does not open. */
export function accountKeyContext(directoryUrl: string): string {
  return `acme-account:${directoryUrl}`;
}

export interface AccountRewrap {
  /** Account keys now wrapped by the new master key. */
  rewrapped: number;
  /** Already wrapped by the new key (a rotation run again): left as they are. */
  current: number;
  /**
   * Opened by neither key (wrapped by a master key older than the current one, from before
   * rotations rewrapped them): left as they are; the next issuance registers a new account
   * (acme-issuer.ts), which loses nothing a certificate depends on.
   */
  unreadable: string[];
}

export async function rewrapAccountKeys(tx: Tx, from: AccountKeyWrapper, to: AccountKeyWrapper): Promise<AccountRewrap> {
  const out: AccountRewrap = { rewrapped: 0, current: 0, unreadable: [] };
  for (const a of await acmeAccountsForUpdate(tx)) {
    const context = accountKeyContext(a.directoryUrl);
    const key = tryUnwrap(from, a.wrappedKey, context);
    if (key) {
      await rewrapAcmeAccount(tx, a.directoryUrl, to.wrap(key, context));
      out.rewrapped++;
    } else if (tryUnwrap(to, a.wrappedKey, context)) out.current++;
    else out.unreadable.push(a.directoryUrl);
  }
  return out;
}

function tryUnwrap(w: AccountKeyWrapper, wrapped: Buffer, context: string): Buffer | undefined {
  try {
    return w.unwrap(wrapped, context);
  } catch {
    return undefined;
  }
}

import { cadenzaError } from '../common/errors.ts';
import { createMasterKey, keyFingerprint, masterKeyLocation, readMasterKey, type MasterKeySource } from '../common/secrets.ts';
import type { Store } from '../store/store.ts';

/**
 * The master key checked against the store before anything uses it. Each workspace's data key is
 * stored wrapped with the fingerprint of the master key that wrapped it (vault.ts), so a key that
 * is missing (a data folder restored without master.key, a variable not passed to a container) or
 * wrong (another installation's key) is found here, at start, instead of as every credential
 * failing and every unsubscribe link already mailed answering 404.
 *
 * A new key is made only for a store with no wrapped key at all: a fresh installation.
 */
export interface KeyCheck {
  /** The configured key's fingerprint (absent: no key configured). */
  fingerprint?: string;
  /** Workspace data keys in the store, by the fingerprint of the master key that wrapped them. */
  wrapped: Record<string, number>;
  /** Workspace keys this master key does not unwrap. */
  mismatched: number;
}

export async function checkKeyAgainstStore(store: Store, key: Buffer | undefined): Promise<KeyCheck> {
  const rows = await store.db
    .selectFrom('workspace_key')
    .select(['master_fingerprint', (eb) => eb.fn.countAll<string>().as('n')])
    .groupBy('master_fingerprint')
    .execute();
  const wrapped = Object.fromEntries(rows.map((r) => [r.master_fingerprint, Number(r.n)]));
  const fingerprint = key ? keyFingerprint(key) : undefined;
  const mismatched = rows.filter((r) => r.master_fingerprint !== fingerprint).reduce((s, r) => s + Number(r.n), 0);
  return { ...(fingerprint ? { fingerprint } : {}), wrapped, mismatched };
}

/** The message that says what to do about a key the store refuses (pure: tested on its own). */
export function keyProblem(check: KeyCheck, where: string): string | undefined {
  if (check.mismatched === 0) return undefined;
  const theirs = Object.keys(check.wrapped).filter((f) => f !== check.fingerprint);
  const fix =
    `Restore the master key these were wrapped with (fingerprint ${theirs.join(', ')}) into ${where}, ` +
    'or set CADENZA_MASTER_KEY / CADENZA_MASTER_KEY_FILE to it; `cadenza keys verify` checks a key without starting. ' +
    'Without that key the stored mailbox credentials and the unsubscribe links already sent cannot be opened: do not replace it with a new one.';
  if (!check.fingerprint) return `no master key found, but the store holds ${check.mismatched} workspace key(s) wrapped by a master key. ${fix}`;
  return `the master key from ${where} (fingerprint ${check.fingerprint}) is not the one the store's ${check.mismatched} workspace key(s) were wrapped with. ${fix}`;
}

/**
 * The installation's master key, for `cadenza start` and every command that opens the vault:
 * the configured one if the store accepts it, a new one for an empty store, else a
 * CONFIG_INVALID error saying what to do.
 */
export async function openMasterKey(store: Store, source: MasterKeySource): Promise<Buffer> {
  const key = readMasterKey(source);
  const check = await checkKeyAgainstStore(store, key);
  const problem = keyProblem(check, masterKeyLocation(source));
  if (problem) throw cadenzaError('CONFIG_INVALID', problem, { fingerprint: check.fingerprint ?? null, wrapped: check.wrapped });
  return key ?? createMasterKey(source);
}

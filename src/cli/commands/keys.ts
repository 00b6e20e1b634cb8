import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../common/config.ts';
import { cadenzaError } from '../../common/errors.ts';
import { decodeMasterKey, keyFingerprint, masterKeyLocation, readMasterKey } from '../../common/secrets.ts';
import { checkKeyAgainstStore, keyProblem } from '../../mailbox/master-key.ts';
import { sealLegacyWebhookSecrets } from '../../api/webhooks/secrets.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { rewrapAccountKeys } from '../../tracking/domains/account-keys.ts';
import type { Store } from '../../store/store.ts';
import { globals, masterKey, output, withStore } from '../context.ts';

/**
 * What `cadenza keys rotate` does to the store. A webhook secret still in clear (0013, upgraded
 * but never started since) is sealed first, under the current key, so that the rotation covers it
 * like every other sealed secret; then, in one transaction, the workspaces' data keys (what they
 * seal is not touched: credentials, webhook secrets, tracking certificates) and the ACME account
 * keys, which the master key wraps directly, are rewrapped.
 */
export async function rotateMasterKey(
  store: Store,
  current: Buffer,
  next: Buffer,
): Promise<{ rewrapped: number; sealed: number; acmeAccounts: { rewrapped: number; unreadable: string[] } }> {
  const sealed = await sealLegacyWebhookSecrets(store, new Vault(store, localKeyWrapper(current)));
  const [from, to] = [localKeyWrapper(current), localKeyWrapper(next)];
  return store.db.transaction().execute(async (tx) => {
    const keys = await Vault.rewrapDataKeys(tx, from, to);
    const acme = await rewrapAccountKeys(tx, from, to);
    return { ...keys, sealed, acmeAccounts: { rewrapped: acme.rewrapped, unreadable: acme.unreadable } };
  });
}

export function register(program: Command): void {
  const keys = program.command('keys');
  keys
    .command('rotate')
    .description('rewrap every workspace data key and the ACME account keys with a new master key (what the data keys seal, mailbox credentials, webhook signing secrets and tracking certificates, is not re-encrypted)')
    .option('--new-key-file <file>', 'the new key (32 bytes, base64); default: generate one')
    .action(async (o: { newKeyFile?: string }, cmd: Command) => {
      const g = globals(cmd);
      const cfg = loadConfig();
      let next: Buffer;
      if (o.newKeyFile) {
        next = Buffer.from(readFileSync(o.newKeyFile, 'utf8').trim(), 'base64');
        if (next.length !== 32) throw cadenzaError('INVALID_INPUT', `${o.newKeyFile} must hold 32 bytes in base64`);
      } else next = randomBytes(32);
      let current = next;
      const r = await withStore(g, async (store) => {
        current = await masterKey(g, store);
        if (next.equals(current)) throw cadenzaError('INVALID_INPUT', 'the new key is the current key');
        return rotateMasterKey(store, current, next);
      });
      // The default key file beside the embedded store is replaced (the old one kept aside); a key
      // from the environment or an explicit file is the operator's to swap.
      const defaultFile = join(g.dataDir ?? cfg.CADENZA_DATA_DIR, 'master.key');
      let where: string;
      if (!process.env.CADENZA_MASTER_KEY && !process.env.CADENZA_MASTER_KEY_FILE && existsSync(defaultFile)) {
        renameSync(defaultFile, `${defaultFile}.${keyFingerprint(current)}.old`);
        writeFileSync(defaultFile, `${next.toString('base64')}\n`, { mode: 0o600 });
        where = `the new key is in ${defaultFile}; the old one was kept as ${defaultFile}.${keyFingerprint(current)}.old (delete it once you have a backup)`;
      } else {
        if (!o.newKeyFile) {
          const out = `master.key.${keyFingerprint(next)}`;
          writeFileSync(out, `${next.toString('base64')}\n`, { mode: 0o600 });
          where = `the new key was written to ${out}: point CADENZA_MASTER_KEY_FILE (or CADENZA_MASTER_KEY) at it before the next start`;
        } else where = `point CADENZA_MASTER_KEY_FILE (or CADENZA_MASTER_KEY) at ${o.newKeyFile} before the next start`;
      }
      const acme = r.acmeAccounts.rewrapped ? ` and ${r.acmeAccounts.rewrapped} ACME account key(s)` : '';
      const stale = r.acmeAccounts.unreadable.length ? ` (the ACME account of ${r.acmeAccounts.unreadable.join(', ')} was wrapped by an older key and is replaced at the next issuance)` : '';
      output(g, { ...r, fingerprint: keyFingerprint(next) }, () => `rewrapped ${r.rewrapped} workspace key(s)${acme}${stale}; ${where}`);
    });
  keys
    .command('verify')
    .description("check a master key against the store's wrapped workspace keys, without starting (exit 2 when they do not match)")
    .option('--key-file <file>', 'the key to check (32 bytes, base64); default: the configured one (CADENZA_MASTER_KEY, CADENZA_MASTER_KEY_FILE, <data dir>/master.key)')
    .action(async (o: { keyFile?: string }, cmd: Command) => {
      const g = globals(cmd);
      const source = { dataDir: g.dataDir ?? loadConfig().CADENZA_DATA_DIR };
      const where = o.keyFile ?? masterKeyLocation(source);
      const key = o.keyFile ? decodeMasterKey(readFileSync(o.keyFile, 'utf8'), o.keyFile) : readMasterKey(source);
      const check = await withStore(g, (store) => checkKeyAgainstStore(store, key));
      const problem = keyProblem(check, where);
      if (problem) throw cadenzaError('CONFIG_INVALID', problem, { ...check });
      const n = Object.values(check.wrapped).reduce((a, b) => a + b, 0);
      output(g, { ok: true, ...check, where }, () =>
        key ? `the master key from ${where} (fingerprint ${check.fingerprint}) unwraps all ${n} workspace key(s)` : `no master key is configured and the store holds no wrapped key: \`cadenza start\` will create ${where}`);
    });
}

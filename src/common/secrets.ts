import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cadenzaError } from './errors.ts';
import { ensurePrivateDir } from './private-files.ts';

/**
 * The master key: 32 random bytes every other secret is derived from (token sealing keys) or
 * wrapped by (the credential vault's per-workspace data keys). From CADENZA_MASTER_KEY (base64),
 * else the file CADENZA_MASTER_KEY_FILE, else `<data dir>/master.key`. Never logged, never stored
 * in the database.
 *
 * Reading never creates one: a key made up for a store that already holds wrapped keys would open
 * none of its credentials and none of the unsubscribe links already mailed. Only the check against
 * the store (mailbox/master-key.ts) decides that a new key is due, for an empty store.
 */
export interface MasterKeySource {
  env?: NodeJS.ProcessEnv;
  dataDir: string;
}

/** Where the key comes from, in words for messages ("CADENZA_MASTER_KEY", or the file's path). */
export function masterKeyLocation(opts: MasterKeySource): string {
  const env = opts.env ?? process.env;
  if (env.CADENZA_MASTER_KEY) return 'CADENZA_MASTER_KEY';
  return env.CADENZA_MASTER_KEY_FILE ?? defaultKeyFile(opts.dataDir);
}

export function defaultKeyFile(dataDir: string): string {
  return join(dataDir, 'master.key');
}

/** The configured key, or undefined when no source holds one (no variable, no file). */
export function readMasterKey(opts: MasterKeySource): Buffer | undefined {
  const env = opts.env ?? process.env;
  if (env.CADENZA_MASTER_KEY) return decode(env.CADENZA_MASTER_KEY, 'CADENZA_MASTER_KEY');
  const file = env.CADENZA_MASTER_KEY_FILE ?? defaultKeyFile(opts.dataDir);
  if (existsSync(file)) return decode(readFileSync(file, 'utf8').trim(), file);
  if (env.CADENZA_MASTER_KEY_FILE) throw cadenzaError('CONFIG_INVALID', `master key file ${file} does not exist`);
  return undefined;
}

/** A new key in `<data dir>/master.key` (mode 0600, in a 0700 folder); fails if the file exists. */
export function createMasterKey(opts: MasterKeySource): Buffer {
  const file = defaultKeyFile(opts.dataDir);
  ensurePrivateDir(dirname(file));
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return key;
}

export function decodeMasterKey(text: string, where: string): Buffer {
  return decode(text.trim(), where);
}

function decode(text: string, where: string): Buffer {
  const key = Buffer.from(text, 'base64');
  if (key.length !== 32) throw cadenzaError('CONFIG_INVALID', `${where} must hold 32 bytes in base64 (openssl rand -base64 32)`);
  return key;
}

/** A key for one purpose, derived from the master key (HKDF-SHA256), so purposes never share a key. */
export function deriveKey(master: Buffer, purpose: string, length = 32): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `cadenza:${purpose}`, length));
}

/** A short, stable fingerprint of a key, for logs and key-rotation bookkeeping (never the key). */
export function keyFingerprint(key: Buffer): string {
  return createHmac('sha256', key).update('cadenza:fingerprint').digest('hex').slice(0, 16);
}

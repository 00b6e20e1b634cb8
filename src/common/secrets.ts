import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cadenzaError } from './errors.ts';

/**
 * The master key: 32 random bytes every other secret is derived from (token sealing keys) or
 * wrapped by (the credential vault's per-workspace data keys). From CADENZA_MASTER_KEY (base64),
 * else the file CADENZA_MASTER_KEY_FILE, else `<data dir>/master.key`, created on first start with
 * mode 0600. Never logged, never stored in the database.
 */
export function loadMasterKey(opts: { env?: NodeJS.ProcessEnv; dataDir: string }): Buffer {
  const env = opts.env ?? process.env;
  if (env.CADENZA_MASTER_KEY) return decode(env.CADENZA_MASTER_KEY, 'CADENZA_MASTER_KEY');
  const file = env.CADENZA_MASTER_KEY_FILE ?? join(opts.dataDir, 'master.key');
  if (existsSync(file)) return decode(readFileSync(file, 'utf8').trim(), file);
  if (env.CADENZA_MASTER_KEY_FILE) throw cadenzaError('CONFIG_INVALID', `master key file ${file} does not exist`);
  mkdirSync(dirname(file), { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return key;
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

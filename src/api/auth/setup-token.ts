import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db, Store } from '../../store/store.ts';
import { hasAnyAccount } from './accounts.ts';
import { newSecret, secretHash } from './tokens.ts';

/**
 * The one-time setup token (migration 0023). A fresh install answers on the network before anyone
 * has an account; without this, whoever reached it first would become its owner. `cadenza start`
 * prints the token and writes it to the data folder (readable by the operator only), and POST
 * /api/setup takes it: knowing it proves access to the machine's console or disk.
 */
export const SETUP_TOKEN_FILE = 'setup-token';

/**
 * A token accepted by setup from now until the first account exists; undefined once one does.
 * Every row stays valid, so each API process sharing one PostgreSQL may issue its own.
 */
export async function issueSetupToken(store: Store, reuse?: string): Promise<string | undefined> {
  if (await hasAnyAccount(store)) return undefined;
  const token = reuse ?? newSecret('', 18);
  await store.db.insertInto('setup_token').values({ token_hash: secretHash(token) }).onConflict((oc) => oc.column('token_hash').doNothing()).execute();
  return token;
}

/**
 * The token for `cadenza start`: the one in the data folder when there is one (a restart keeps
 * what was printed before), else a new one written there with mode 0600. Once the first account
 * exists the file is removed and nothing is issued.
 */
export async function setupTokenInDataDir(store: Store, dataDir: string): Promise<{ token: string; file: string } | undefined> {
  const file = join(dataDir, SETUP_TOKEN_FILE);
  if (await hasAnyAccount(store)) {
    rmSync(file, { force: true });
    return undefined;
  }
  const kept = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  const token = await issueSetupToken(store, kept.length >= 16 ? kept : undefined);
  if (!token) return undefined;
  if (token !== kept) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
  }
  // writeFileSync's mode applies only to a new file: an older one is narrowed too.
  chmodSync(file, 0o600);
  return { token, file };
}

/** Whether a presented token is a live one. Compared by hash: the stored value is never the token. */
export async function setupTokenValid(db: Db, token: string): Promise<boolean> {
  return !!(await db.selectFrom('setup_token').select('token_hash').where('token_hash', '=', secretHash(token)).executeTakeFirst());
}

/** Setup is done: no token works again. */
export async function spendSetupTokens(db: Db): Promise<void> {
  await db.deleteFrom('setup_token').execute();
}

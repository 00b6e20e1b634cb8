import type { Command } from 'commander';
import { systemClock } from '../common/clock.ts';
import { loadConfig } from '../common/config.ts';
import { systemRandom } from '../common/random.ts';
import { migrate } from '../store/migrate.ts';
import { openMasterKey } from '../mailbox/master-key.ts';
import { ensurePrivateDir } from '../common/private-files.ts';
import { ensureDefaultWorkspace } from '../workspace/workspaces.ts';
import { newId } from '../common/ids.ts';
import { notifyPushBus } from '../ops/push-bus.ts';
import type { WorkKind } from '../ops/work-nudge.ts';
import type { Store } from '../store/store.ts';
import { isRemoteStore } from '../store/remote/client.ts';
import { openCommandStore } from './open-store.ts';

/** Options every command accepts (declared once on the program). */
export interface GlobalOptions {
  json?: boolean;
  databaseUrl?: string;
  dataDir?: string;
}

export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

export const deps = { clock: systemClock, random: systemRandom() };

/** Opens the store the options (or DATABASE_URL / CADENZA_DATA_DIR) name, migrated: its own, or a running server's (open-store.ts). */
export async function withStore<T>(g: GlobalOptions, fn: (store: Store) => Promise<T>, opts: { migrate?: boolean } = {}): Promise<T> {
  const cfg = loadConfig();
  const databaseUrl = g.databaseUrl ?? cfg.DATABASE_URL;
  if (!databaseUrl) ensurePrivateDir(g.dataDir ?? cfg.CADENZA_DATA_DIR);
  const store = await openCommandStore({ databaseUrl, dataDir: g.dataDir ?? cfg.CADENZA_DATA_DIR, preparedStatements: cfg.CADENZA_PG_PREPARED_STATEMENTS });
  try {
    if (opts.migrate !== false) {
      await migrate(store);
      await ensureDefaultWorkspace(store, deps);
    }
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * Tells a running Cadenza that work is due now (src/ops/work-nudge.ts), as the API does: on
 * PostgreSQL the server's processes hear this NOTIFY and act at once instead of at their next poll;
 * a command served by the server that holds the embedded store tells it directly. A command that
 * opened the embedded folder itself has no server to tell (the server reads the store when it
 * starts). A lost nudge only costs the poll, so a failure here does not fail the command.
 */
export async function nudgeRunning(store: Store, ...work: WorkKind[]): Promise<void> {
  if (isRemoteStore(store)) {
    for (const w of work) await store.nudge(w).catch(() => undefined);
    return;
  }
  if (store.backend !== 'postgres') return;
  const origin = `cli:${newId(deps.clock.now(), deps.random)}`;
  for (const w of work) await notifyPushBus(store, { origin, kind: 'work', work: w }).catch(() => undefined);
}

/**
 * The master key for this installation (env, key file, or created beside the embedded store for
 * an empty one), checked against the store's wrapped keys (mailbox/master-key.ts).
 */
export async function masterKey(g: GlobalOptions, store: Store): Promise<Buffer> {
  const cfg = loadConfig();
  return openMasterKey(store, { dataDir: g.dataDir ?? cfg.CADENZA_DATA_DIR });
}

/** Prints a result: one JSON document with --json, else the human text. */
export function output(g: GlobalOptions, data: unknown, human: () => string): void {
  if (g.json) process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  else process.stdout.write(`${human()}\n`);
}

// Here too for the commands and tests that import it with the rest of the context.
export { reportError } from './report-error.ts';

export function table(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return '(none)';
  const cols = Object.keys(rows[0]!);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(width[i]!)).join('  ').trimEnd();
  return [line(cols), line(width.map((w) => '-'.repeat(w))), ...rows.map((r) => line(cols.map((c) => String(r[c] ?? ''))))].join('\n');
}

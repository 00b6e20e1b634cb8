import { embeddedDbDir } from '../common/config.ts';
import { embeddedHolder } from '../store/embedded-lock.ts';
import { connectRemoteStore } from '../store/remote/client.ts';
import { readEndpoint } from '../store/remote/endpoint.ts';
import type { Store } from '../store/store.ts';

/**
 * The store a command works on: PostgreSQL when a URL is given; else the embedded folder, opened
 * here, or, while a running `cadenza start` holds it, that server's store through the endpoint it
 * publishes beside the folder (store/remote/server.ts). The command's code is the same either way.
 */
export async function openCommandStore(o: { databaseUrl?: string | undefined; dataDir: string; preparedStatements?: number }): Promise<Store> {
  // Loaded only when opened here: a command served by the running server never loads PGlite.
  const local = () => import('../store/store.ts').then((m) => m.openStore(o.databaseUrl ? { databaseUrl: o.databaseUrl, ...(o.preparedStatements !== undefined ? { preparedStatements: o.preparedStatements } : {}) } : { dataDir: embeddedDbDir(o.dataDir) }));
  if (o.databaseUrl) return local();
  const dbDir = embeddedDbDir(o.dataDir);
  const holder = embeddedHolder(dbDir);
  const endpoint = holder === undefined ? undefined : readEndpoint(dbDir);
  // No endpoint from the holder (a server of an older version, or a command holding the folder
  // for a moment): opening it here says who holds it and what to do.
  if (!endpoint || endpoint.pid !== holder) return local();
  return connectRemoteStore(endpoint);
}

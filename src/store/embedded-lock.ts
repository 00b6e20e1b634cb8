import { cadenzaError } from '../common/errors.ts';
import { pidLockHolder, takePidLock } from '../common/pid-lock.ts';

/**
 * PGlite is a database inside one process: a second process that opens the same folder works on
 * its own copy in memory, and the two overwrite each other's files (a `cadenza mailbox add` run
 * while `cadenza start` held the folder was simply gone after the server stopped). So the folder is
 * held with a lock file beside it (`<folder>.lock`, the holder's pid; common/pid-lock.ts); another
 * live process is refused with what to do, and a dead holder's file is taken over.
 *
 * Returns the release, to call once the database is closed.
 */
export function lockEmbeddedDir(dataDir: string): () => void {
  const path = `${dataDir}.lock`;
  return takePidLock(path, (holder) =>
    cadenzaError(
      'STORE_UNAVAILABLE',
      `the embedded database ${dataDir} is in use by process ${holder} (a running \`cadenza start\`?): the embedded database serves one process at a time, so stop it first and run this again, or run Cadenza on PostgreSQL (DATABASE_URL), where commands work beside a running server. If no Cadenza runs, remove ${path}.`,
      { holder, lockFile: path },
    ),
  );
}

/** The live process holding the folder, if one does. */
export function embeddedHolder(dataDir: string): number | undefined {
  return pidLockHolder(`${dataDir}.lock`);
}

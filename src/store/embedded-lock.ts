import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { cadenzaError } from '../common/errors.ts';

/**
 * PGlite is a database inside one process: a second process that opens the same folder works on
 * its own copy in memory, and the two overwrite each other's files (a `cadenza mailbox add` run
 * while `cadenza start` held the folder was simply gone after the server stopped). So the folder is
 * held with a lock file beside it (`<folder>.lock`, the holder's pid); another live process is
 * refused with what to do, and a dead holder's file is taken over.
 *
 * The same process may open the folder again (a test reopening it): PGlite then shares nothing
 * either, but that is the caller's own sequencing, not a second program.
 *
 * Returns the release, to call once the database is closed.
 */
export function lockEmbeddedDir(dataDir: string): () => void {
  const path = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      if (holder === process.pid) return () => undefined;
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) {
        throw cadenzaError(
          'STORE_UNAVAILABLE',
          `the embedded database ${dataDir} is in use by process ${holder} (a running \`cadenza start\`?): the embedded database serves one process at a time, so stop it first and run this again, or run Cadenza on PostgreSQL (DATABASE_URL), where commands work beside a running server. If no Cadenza runs, remove ${path}.`,
          { holder, lockFile: path },
        );
      }
      // Left by a process that is gone (killed, crashed): the folder is free.
      try {
        unlinkSync(path);
      } catch (u) {
        if ((u as NodeJS.ErrnoException).code !== 'ENOENT') throw u;
      }
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return () => {
      try {
        if (Number.parseInt(readFileSync(path, 'utf8'), 10) === process.pid) unlinkSync(path);
      } catch {
        // already gone
      }
    };
  }
  throw cadenzaError('STORE_UNAVAILABLE', `cannot take the lock ${path} on the embedded database ${dataDir}`);
}

/** The live process holding the folder, if one does. */
export function embeddedHolder(dataDir: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(`${dataDir}.lock`, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, under another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

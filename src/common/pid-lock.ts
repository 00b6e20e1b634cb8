import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

/**
 * A folder held by one process: a lock file (the holder's pid) taken with O_EXCL. Another live
 * process is refused (the caller words why); a file left by a process that is gone (killed,
 * crashed) is taken over. The same process may take it again (a test reopening its folder, or a
 * handle that was dropped without closing): that is the caller's own sequencing, not a second
 * program, and whichever handle is released first removes the file.
 *
 * Returns the release, to call once the folder is no longer written.
 */
export function takePidLock(path: string, refuse: (holder: number) => Error): () => void {
  const release = () => {
    try {
      if (Number.parseInt(readFileSync(path, 'utf8'), 10) === process.pid) unlinkSync(path);
    } catch {
      // already gone
    }
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      if (holder === process.pid) return release;
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) throw refuse(holder);
      try {
        unlinkSync(path);
      } catch (u) {
        if ((u as NodeJS.ErrnoException).code !== 'ENOENT') throw u;
      }
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return release;
  }
  throw new Error(`cannot take the lock ${path}: another process takes and drops it in a loop`);
}

/** The live process (other than this one) holding the lock file, if one does. */
export function pidLockHolder(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
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

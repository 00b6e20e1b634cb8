import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Where a running server answers for its embedded store: `<folder>.endpoint` beside the store's
 * lock (`<folder>.lock`, embedded-lock.ts), a loopback port and a secret token, readable by the
 * folder's owner only (0600). Whoever can read it could read the database files themselves, so
 * the token grants no more than the folder already does.
 */
export interface Endpoint {
  pid: number;
  host: '127.0.0.1';
  port: number;
  token: string;
}

export const endpointFile = (dbDir: string): string => `${dbDir}.endpoint`;

export const newToken = (): string => randomBytes(32).toString('base64url');

export function writeEndpoint(dbDir: string, e: Endpoint): void {
  const path = endpointFile(dbDir);
  const tmp = `${path}.${process.pid}.tmp`;
  // Written whole then renamed: a command never reads half a file.
  writeFileSync(tmp, `${JSON.stringify(e)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

/** The endpoint of the server holding the folder, or undefined when none was published. */
export function readEndpoint(dbDir: string): Endpoint | undefined {
  try {
    const e = JSON.parse(readFileSync(endpointFile(dbDir), 'utf8')) as Endpoint;
    return Number.isInteger(e.pid) && Number.isInteger(e.port) && typeof e.token === 'string' ? e : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the file if it is still this process's own. */
export function removeEndpoint(dbDir: string): void {
  if (readEndpoint(dbDir)?.pid === process.pid) rmSync(endpointFile(dbDir), { force: true });
}

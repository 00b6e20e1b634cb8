import { readFileSync } from 'node:fs';

/** Cadenza's version, from package.json: a module of its own so that `cadenza --version` loads nothing else. */
export const version: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

// Entry of a prepare-pool thread (prepare-pool.ts). In dist/ (the build bin/cadenza.js runs) the
// thread's code is compiled JavaScript beside this file. Otherwise it is TypeScript: run through
// tsx, the thread inherits tsx's loader from the process; where it does not (vitest, or plain
// node) tsx's loader is registered in this thread before the import. Nothing is fetched.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = new URL('./prepare-thread.js', import.meta.url);
const target = existsSync(fileURLToPath(compiled)) ? compiled.href : new URL('./prepare-thread.ts', import.meta.url).href;
try {
  await import(target);
} catch (e) {
  if (e?.code !== 'ERR_UNKNOWN_FILE_EXTENSION' || target === compiled.href) throw e;
  const { register } = await import('tsx/esm/api');
  register();
  // A new specifier: the failed import above is cached under the plain one.
  await import(`${target}?tsx`);
}

// Entry of a prepare-pool thread (prepare-pool.ts). The thread's code is TypeScript: under
// `npm start` the thread inherits tsx's loader from the process; where it does not (vitest, or
// plain node) tsx's loader is registered in this thread before the import. Nothing is fetched.
const target = new URL('./prepare-thread.ts', import.meta.url).href;
try {
  await import(target);
} catch (e) {
  if (e?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
  const { register } = await import('tsx/esm/api');
  register();
  // A new specifier: the failed import above is cached under the plain one.
  await import(`${target}?tsx`);
}

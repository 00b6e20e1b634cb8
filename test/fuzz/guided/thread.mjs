// Entry of the guided fuzzer's thread (campaign.ts). The thread's code is TypeScript: run through
// tsx it inherits tsx's loader from the process; where it does not (vitest), tsx's loader is
// registered in this thread before the import (as src/ingest/worker/prepare-thread.mjs does).
const target = new URL('./thread.ts', import.meta.url).href;
try {
  await import(target);
} catch (e) {
  if (e?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
  const { register } = await import('tsx/esm/api');
  register();
  await import(`${target}?tsx`);
}

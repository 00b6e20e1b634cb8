/**
 * STYLE habit 10: a test fails if it leaves a socket, server or timer behind. Snapshot the
 * process's active handles before the test and compare after closing everything; sockets close
 * asynchronously, so wait a little for them before judging. Node lists only handles that keep the
 * process alive, so an unref'd timer (systemClock's) is not seen here.
 */
const watched = new Set(['TCPSocketWrap', 'TCPServerWrap', 'Timeout']);

export type HandleCounts = Record<string, number>;

export function handleCounts(): HandleCounts {
  const out: HandleCounts = {};
  for (const r of process.getActiveResourcesInfo()) if (watched.has(r)) out[r] = (out[r] ?? 0) + 1;
  return out;
}

export async function expectNoLeaks(before: HandleCounts, waitMs = 500): Promise<void> {
  const grown = () => Object.entries(handleCounts()).filter(([k, n]) => n > (before[k] ?? 0));
  for (let waited = 0; grown().length && waited < waitMs; waited += 10) await new Promise((r) => setTimeout(r, 10));
  const left = grown();
  if (left.length) throw new Error(`left open after the test: ${left.map(([k, n]) => `${k} ${n} (was ${before[k] ?? 0})`).join(', ')}`);
}

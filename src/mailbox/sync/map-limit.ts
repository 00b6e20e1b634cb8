/**
 * `fn` over `items` with at most `limit` calls in flight, results in the items' order. The sync
 * connectors fetch a page's messages this way: one at a time wastes a provider's round trip per
 * message, and more than a few at once meets its per-mailbox concurrency limit (Graph: 4 per app
 * and mailbox, throttling-limits; Gmail publishes no number, clients keep under 10). The first
 * failure rejects once every call started has settled, so nothing is left running.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed: { error: unknown } | null = null;
  const worker = async () => {
    while (failed === null && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed) throw (failed as { error: unknown }).error;
  return out;
}

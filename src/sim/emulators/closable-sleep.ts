/**
 * A real-timer wait for the emulators' network deliveries (push.ts, webhook-delivery.ts) that a
 * close() can cut short: the timer is kept in `timers` for close() to clear, and the wait answers
 * false when the owner closed meanwhile, so nothing is sent after close().
 */
export function closableSleep(timers: Set<NodeJS.Timeout>, closed: () => boolean, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (closed()) return resolve(false);
    const t = setTimeout(() => {
      timers.delete(t);
      resolve(!closed());
    }, ms);
    timers.add(t);
  });
}

/**
 * Fault injection shared by the provider emulators. A test queues faults for a route ('send',
 * 'list', …); the next matching request takes one instead of (or after) being processed. Faults
 * are consumed in order, so "429 twice, then normal" is two inject calls.
 *
 *   respond  answer this status/headers/body instead of processing (a documented error answer,
 *            built by the emulator's own helpers so its body has the provider's shape).
 *   drop     close the connection without answering. after 'receiving': the request was read
 *            and ignored (the provider never acted); after 'processing': it took effect (the
 *            message IS stored) and then the answer was lost. Either way the client cannot tell.
 *   hang     never answer (until the client gives up or the emulator closes); after as for drop.
 *            This is how a test makes a client time out without sleeping.
 */
export type Fault =
  | { kind: 'respond'; status: number; headers?: Record<string, string>; body?: unknown }
  | { kind: 'drop'; after: 'receiving' | 'processing' }
  | { kind: 'hang'; after: 'receiving' | 'processing' };

interface Queued {
  route: string;
  fault: Fault;
  remaining: number;
}

export class FaultInjector {
  private queue: Queued[] = [];

  /** Queues a fault for the next `times` requests to `route` (the emulator's route names). */
  inject(route: string, fault: Fault, times = 1): void {
    if (!Number.isInteger(times) || times < 1) throw new Error(`times must be a positive integer, got ${times}`);
    this.queue.push({ route, fault, remaining: times });
  }

  /** The fault the next request to `route` gets, if any (consumed). */
  take(route: string): Fault | undefined {
    const q = this.queue.find((x) => x.route === route || x.route === '*');
    if (!q) return undefined;
    q.remaining -= 1;
    if (q.remaining === 0) this.queue.splice(this.queue.indexOf(q), 1);
    return q.fault;
  }

  /** Faults still waiting; a test can assert that every injected fault was used. */
  pending(): number {
    return this.queue.reduce((n, q) => n + q.remaining, 0);
  }

  clear(): void {
    this.queue = [];
  }
}

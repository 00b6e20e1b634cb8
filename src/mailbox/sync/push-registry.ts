/**
 * Where push notifications meet the watches waiting for them. The push routes (push-routes.ts)
 * receive a provider's POST and look the mailbox up here; a connector's watch() registers its
 * `changed` callback here and removes it on close. Nothing here pulls: a notification only says
 * "pull now" (source.ts), so an unknown, late or repeated one is harmless.
 *
 * In-process: it serves `cadenza start`, where the API and sync roles share a process. Where the
 * roles run apart, the route's process must forward the signal to the mailbox's owner (through
 * PostgreSQL, which already coordinates the leases); this class is the seam where that goes, and
 * Graph's clientState would then be derived from a key both processes hold instead of kept here.
 */
export interface GraphWatcher {
  changed(): void;
  /** A lifecycle notification (change-notifications-lifecycle-events.md) for one of its subscriptions. */
  lifecycle(event: string, subscriptionId: string): void;
}

export class PushRegistry {
  private readonly gmail = new Map<string, Set<() => void>>();
  private readonly graph = new Map<string, { watcher: GraphWatcher; subscriptions: Set<string> }>();

  /** Gmail: calls `changed` for Pub/Sub messages naming `emailAddress`. Returns the unregister function. */
  watchGmail(emailAddress: string, changed: () => void): () => void {
    const key = emailAddress.trim().toLowerCase();
    let set = this.gmail.get(key);
    if (!set) this.gmail.set(key, (set = new Set()));
    set.add(changed);
    return () => {
      set.delete(changed);
      if (set.size === 0 && this.gmail.get(key) === set) this.gmail.delete(key);
    };
  }

  /** True when a watcher was told. */
  gmailNotified(emailAddress: string): boolean {
    const set = this.gmail.get(emailAddress.trim().toLowerCase());
    if (!set) return false;
    for (const f of [...set]) f();
    return true;
  }

  /**
   * Graph: a watcher known by the clientState secret it gave its subscriptions (a notification must
   * carry it, change-notifications-delivery-webhooks.md). `subscribed` records a subscription id
   * once Graph answered; until then a notification with the right clientState is taken anyway
   * (Graph may notify before its 201 reaches us).
   */
  watchGraph(clientState: string, watcher: GraphWatcher): { subscribed(id: string): void; forget(id: string): void; close(): void } {
    const entry = { watcher, subscriptions: new Set<string>() };
    this.graph.set(clientState, entry);
    return {
      subscribed: (id) => void entry.subscriptions.add(id),
      forget: (id) => void entry.subscriptions.delete(id),
      close: () => {
        if (this.graph.get(clientState) === entry) this.graph.delete(clientState);
      },
    };
  }

  /** The watcher a Graph notification belongs to, or why it is refused. */
  graphWatcher(clientState: unknown, subscriptionId: unknown): { ok: true; watcher: GraphWatcher } | { ok: false; why: 'clientState' | 'subscription' } {
    const entry = typeof clientState === 'string' ? this.graph.get(clientState) : undefined;
    if (!entry) return { ok: false, why: 'clientState' };
    if (entry.subscriptions.size > 0 && (typeof subscriptionId !== 'string' || !entry.subscriptions.has(subscriptionId))) {
      return { ok: false, why: 'subscription' };
    }
    return { ok: true, watcher: entry.watcher };
  }
}

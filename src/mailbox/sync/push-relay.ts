import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PushBus, PushMessage } from '../../ops/push-bus.ts';
import { PushRegistry, type GraphWatcher } from './push-registry.ts';

/**
 * A PushRegistry for processes that do not all run the sync role: a notification the route's
 * process has no watcher for is published on the bus (PostgreSQL NOTIFY, ops/push-bus.ts, which declares its messages), and every
 * process hands the ones it receives to its own registry, where the mailbox's owner (the sync
 * process holding its lease) has registered its watch. Push only triggers a pull (source.ts), so a
 * notification delivered to several processes, or to none, costs one pull or one poll interval.
 *
 * Graph notifications are checked by clientState; the route's process cannot know a secret another
 * process chose, so with a relay the clientState is derived from the installation's push secret and
 * the mailbox id (`graphClientState`): any process can tell a genuine one from a forged one before
 * publishing it, and only the owner checks the subscription id.
 */
/** The Graph clientState for a mailbox: `<mailboxId>.<HMAC-SHA256(secret, mailboxId)>` (80 characters; Graph allows 128). */
export function graphClientState(secret: string, mailboxId: string): string {
  return `${mailboxId}.${mac(secret, mailboxId)}`;
}

export function isGraphClientState(secret: string, clientState: string): boolean {
  const dot = clientState.lastIndexOf('.');
  if (dot <= 0) return false;
  const given = Buffer.from(clientState.slice(dot + 1));
  const want = Buffer.from(mac(secret, clientState.slice(0, dot)));
  return given.length === want.length && timingSafeEqual(given, want);
}

function mac(secret: string, mailboxId: string): string {
  return createHmac('sha256', secret).update(`graph-client-state:${mailboxId}`).digest('base64url');
}

export class RelayedPushRegistry extends PushRegistry {
  private readonly log: (e: unknown) => void;

  constructor(
    private readonly bus: PushBus,
    private readonly o: { origin: string; secret: string; onError?: (e: unknown) => void },
  ) {
    super();
    this.log = o.onError ?? (() => undefined);
    bus.subscribe((m) => this.receive(m));
  }

  override gmailNotified(emailAddress: string): boolean {
    if (super.gmailNotified(emailAddress)) return true;
    this.publish({ origin: this.o.origin, kind: 'gmail', emailAddress });
    return true;
  }

  override graphWatcher(clientState: unknown, subscriptionId: unknown): ReturnType<PushRegistry['graphWatcher']> {
    const local = super.graphWatcher(clientState, subscriptionId);
    if (local.ok || local.why === 'subscription') return local;
    if (typeof clientState !== 'string' || !isGraphClientState(this.o.secret, clientState)) return local;
    const id = typeof subscriptionId === 'string' ? subscriptionId : '';
    const forward: GraphWatcher = {
      changed: () => this.publish({ origin: this.o.origin, kind: 'graph', clientState, subscriptionId: id }),
      lifecycle: (lifecycleEvent) => this.publish({ origin: this.o.origin, kind: 'graph', clientState, subscriptionId: id, lifecycleEvent }),
    };
    return { ok: true, watcher: forward };
  }

  private publish(m: PushMessage): void {
    this.bus.publish(m).catch(this.log);
  }

  /** A message from the bus: only the local watchers are told (never published again). */
  private receive(m: PushMessage): void {
    if (m.origin === this.o.origin || m.kind === 'work' || m.kind === 'pull' || m.kind === 'task_done' || m.kind === 'planned') return;
    if (m.kind === 'gmail') {
      super.gmailNotified(m.emailAddress);
      return;
    }
    const found = super.graphWatcher(m.clientState, m.subscriptionId);
    if (!found.ok) return;
    if (m.lifecycleEvent !== undefined) found.watcher.lifecycle(m.lifecycleEvent, m.subscriptionId);
    else found.watcher.changed();
  }
}

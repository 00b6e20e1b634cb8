import { describe, expect, it } from 'vitest';
import type { PushBus, PushMessage } from '../../ops/push-bus.ts';
import { graphClientState, isGraphClientState, RelayedPushRegistry } from './push-relay.ts';
import { pushSettingsFrom } from './push-settings.ts';

/** What PostgreSQL NOTIFY does for the relay: every message to every subscriber, the sender included. */
function memoryBus(): PushBus & { sent: PushMessage[] } {
  const subs: Array<(m: PushMessage) => void> = [];
  const sent: PushMessage[] = [];
  return {
    sent,
    async publish(m) {
      sent.push(m);
      for (const s of subs) s(structuredClone(m));
    },
    subscribe: (f) => void subs.push(f),
    close: async () => undefined,
  };
}

const SECRET = 'a push secret of enough length';
const MB = '0193a0b4-5e6f-7a8b-9c0d-1e2f3a4b5c6d';

describe('push relay between processes', () => {
  it("a Gmail push for a mailbox another process watches reaches that process's watcher, once", async () => {
    const bus = memoryBus();
    const api = new RelayedPushRegistry(bus, { origin: 'api', secret: SECRET });
    const sync = new RelayedPushRegistry(bus, { origin: 'sync', secret: SECRET });
    let woken = 0;
    sync.watchGmail('Rep@Acme.test', () => woken++);
    expect(api.gmailNotified('rep@acme.test')).toBe(true);
    await Promise.resolve();
    expect(woken).toBe(1);
    // The owner's own route tells its watcher directly and publishes nothing.
    sync.gmailNotified('rep@acme.test');
    expect([woken, bus.sent.length]).toEqual([2, 1]);
  });

  it('a Graph notification is forwarded only with a genuine clientState, and the owner checks the subscription', async () => {
    const bus = memoryBus();
    const api = new RelayedPushRegistry(bus, { origin: 'api', secret: SECRET });
    const sync = new RelayedPushRegistry(bus, { origin: 'sync', secret: SECRET });
    const seen: string[] = [];
    const cs = graphClientState(SECRET, MB);
    const reg = sync.watchGraph(cs, { changed: () => seen.push('changed'), lifecycle: (e, id) => seen.push(`${e}:${id}`) });
    reg.subscribed('sub-1');

    const forged = api.graphWatcher(`${MB}.${'A'.repeat(43)}`, 'sub-1');
    expect(forged).toEqual({ ok: false, why: 'clientState' });
    expect(api.graphWatcher(graphClientState('another secret entirely', MB), 'sub-1').ok).toBe(false);

    const ok = api.graphWatcher(cs, 'sub-1');
    if (!ok.ok) throw new Error('refused a genuine clientState');
    ok.watcher.changed();
    ok.watcher.lifecycle('missed', 'sub-1');
    // A genuine clientState with another subscription's id: forwarded, dropped by the owner.
    const other = api.graphWatcher(cs, 'sub-9');
    if (other.ok) other.watcher.changed();
    await Promise.resolve();
    expect(seen).toEqual(['changed', 'missed:sub-1']);
    expect(bus.sent).toHaveLength(3);
  });

  it('clientState is the mailbox id and a MAC under the push secret, within Graph’s 128 characters', () => {
    const cs = graphClientState(SECRET, MB);
    expect(cs.startsWith(`${MB}.`)).toBe(true);
    expect(cs.length).toBeLessThanOrEqual(128);
    expect(isGraphClientState(SECRET, cs)).toBe(true);
    expect(isGraphClientState(SECRET, cs.replace(MB, MB.replace('0193', '0194')))).toBe(false);
    expect(isGraphClientState(SECRET, 'no-dot')).toBe(false);
  });
});

describe('push settings', () => {
  it('off without a secret; Gmail with its topic; Graph only under an https public URL', () => {
    expect(pushSettingsFrom({ CADENZA_PUSH_SECRET: undefined, CADENZA_GMAIL_PUBSUB_TOPIC: 'projects/p/topics/t', CADENZA_PUBLIC_URL: 'https://x.test' })).toBeUndefined();
    expect(pushSettingsFrom({ CADENZA_PUSH_SECRET: SECRET, CADENZA_GMAIL_PUBSUB_TOPIC: 'projects/p/topics/t', CADENZA_PUBLIC_URL: 'http://cadenza.acme.test' })).toEqual({ secret: SECRET, gmailTopic: 'projects/p/topics/t' });
    expect(pushSettingsFrom({ CADENZA_PUSH_SECRET: SECRET, CADENZA_GMAIL_PUBSUB_TOPIC: undefined, CADENZA_PUBLIC_URL: 'https://cadenza.acme.test/base' })).toEqual({ secret: SECRET, graphNotificationUrl: 'https://cadenza.acme.test/base/push/graph' });
  });
});

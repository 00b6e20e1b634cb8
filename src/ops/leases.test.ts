import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { holds, Leases, type Lease } from './leases.ts';

describe.each(testBackends())('leases on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('gives one owner at a time, renews with the same token, and fences a stale owner after a takeover', async () => {
    const clock = new SimClock(Date.UTC(2026, 0, 1));
    const leases = new Leases(store, clock);
    const a = await leases.acquire('mailbox:1', 'proc-a', 30_000);
    expect(a).not.toBeNull();
    expect(await leases.acquire('mailbox:1', 'proc-b', 30_000)).toBeNull();
    const again = await leases.acquire('mailbox:1', 'proc-a', 30_000);
    expect(again!.token).toBe(a!.token);
    clock.advance(20_000);
    const renewed = await leases.renew(a!, 30_000);
    expect(renewed!.expiresAt).toBe(clock.now() + 30_000);
    expect(await holds(store.db, 'mailbox:1', a!.token, clock.now())).toBe(true);

    clock.advance(31_000); // proc-a stalls past its lease
    const b = await leases.acquire('mailbox:1', 'proc-b', 30_000);
    expect(b!.token).toBeGreaterThan(a!.token);
    expect(await leases.renew(a!, 30_000)).toBeNull();
    expect(await holds(store.db, 'mailbox:1', a!.token, clock.now())).toBe(false);
    expect(await holds(store.db, 'mailbox:1', b!.token, clock.now())).toBe(true);
    expect(await leases.holders('mailbox:')).toEqual(new Map([['1', 'proc-b']]));

    await leases.release(b!);
    const c = await leases.acquire('mailbox:1', 'proc-a', 30_000);
    expect(c!.token).toBeGreaterThan(b!.token);
  });

  it('takes a live lease over at once from an owner proven gone, with a larger token that fences the old one', async () => {
    const clock = new SimClock(Date.UTC(2026, 0, 1));
    const leases = new Leases(store, clock);
    const dead = await leases.acquire('mailbox:2', 'dead-proc', 60_000);
    expect(await leases.acquire('mailbox:2', 'proc-b', 60_000, ['someone-else'])).toBeNull();
    const [b, c] = await Promise.all([leases.acquire('mailbox:2', 'proc-b', 60_000, ['dead-proc']), leases.acquire('mailbox:2', 'proc-c', 60_000, ['dead-proc'])]);
    const won = b ?? c;
    expect([b, c].filter(Boolean).length).toBe(1);
    expect(won!.token).toBeGreaterThan(dead!.token);
    expect(await holds(store.db, 'mailbox:2', dead!.token, clock.now())).toBe(false);
    expect(await leases.renew(dead!, 60_000)).toBeNull();
  });

  it('takes many leases in one call: the free, the expired and its own; not one a live owner holds', async () => {
    const clock = new SimClock(Date.UTC(2026, 0, 1));
    const leases = new Leases(store, clock);
    const live = await leases.acquire('sync:all-b', 'proc-b', 60_000);
    const expired = await leases.acquire('sync:all-c', 'proc-c', 10_000);
    const mine = await leases.acquire('sync:all-d', 'proc-a', 60_000);
    clock.advance(20_000);
    const got = await leases.acquireAll(['sync:all-d', 'sync:all-a', 'sync:all-b', 'sync:all-c'], 'proc-a', 60_000);
    expect([...got.keys()].sort()).toEqual(['sync:all-a', 'sync:all-c', 'sync:all-d']);
    expect(got.get('sync:all-d')!.token).toBe(mine!.token); // already ours: renewed, same token
    expect(got.get('sync:all-c')!.token).toBeGreaterThan(expired!.token);
    expect(got.get('sync:all-a')!.expiresAt).toBe(clock.now() + 60_000);
    expect(await holds(store.db, 'sync:all-b', live!.token, clock.now())).toBe(true);
    expect(await holds(store.db, 'sync:all-c', expired!.token, clock.now())).toBe(false);
    // Proven gone: its live lease is taken over, with a new token.
    const taken = await leases.acquireAll(['sync:all-b'], 'proc-a', 60_000, ['proc-b']);
    expect(taken.get('sync:all-b')!.token).toBeGreaterThan(live!.token);
  });

  it('renews many leases in one call, in the order given, and answers null for each one lost', async () => {
    const clock = new SimClock(Date.UTC(2026, 0, 1));
    const leases = new Leases(store, clock);
    // Past one chunk of the set-based renewal (500), so that the answers of two statements line up.
    const mine = [];
    for (let i = 0; i < 503; i++) mine.push((await leases.acquire(`sync:many-${i}`, 'proc-a', 30_000))!);
    clock.advance(31_000);
    const taken = await leases.acquire('sync:many-7', 'proc-b', 30_000); // expired and taken over
    const released = mine[501]!;
    await leases.release(released);
    const renewed = await leases.renewAll(mine, 30_000);
    expect(renewed).toHaveLength(503);
    // All had expired (the clock moved past them): only a lease still live is renewed.
    expect(renewed.every((l) => l === null)).toBe(true);

    clock.advance(1_000);
    const live = [];
    for (let i = 0; i < 503; i++) live.push(await leases.acquire(`sync:many-${i}`, 'proc-a', 30_000));
    expect(live[7]).toBeNull(); // proc-b holds it
    const held = live.filter((l): l is Lease => l !== null);
    clock.advance(20_000);
    await leases.release(held[500]!);
    const again = await leases.renewAll(held, 30_000);
    expect(again.map((l) => l?.resource ?? null)).toEqual(held.map((l, i) => (i === 500 ? null : l.resource)));
    expect(again[0]!.expiresAt).toBe(clock.now() + 30_000);
    expect(again[0]!.token).toBe(held[0]!.token);
    expect(await holds(store.db, held[501]!.resource, held[501]!.token, clock.now() + 25_000)).toBe(true);
    expect(await holds(store.db, taken!.resource, taken!.token, clock.now())).toBe(true);
  });

  it('lets exactly one of many concurrent acquirers win', async () => {
    const clock = new SimClock(Date.UTC(2026, 0, 1));
    const leases = new Leases(store, clock);
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) => leases.acquire('mailbox:race', `p${i}`, 30_000)));
    expect(got.filter(Boolean).length).toBe(1);
  });
});

import { expect, it } from 'vitest';
import { Gate } from './gate.ts';

it('holds at most `limit` at once and lets urgent waiters pass the queue', async () => {
  const gate = new Gate(2);
  const order: string[] = [];
  let running = 0;
  let most = 0;
  const releases: Array<() => void> = [];
  const job = (name: string, urgent = false) =>
    gate.run(async () => {
      running++;
      most = Math.max(most, running);
      order.push(name);
      await new Promise<void>((r) => releases.push(r));
      running--;
    }, { urgent });
  const all = [job('a'), job('b'), job('c'), job('d'), job('push', true)];
  await new Promise((r) => setTimeout(r, 0));
  expect(order).toEqual(['a', 'b']);
  expect(gate.waiting).toBe(3);
  while (order.length < 5 || releases.length) {
    releases.shift()?.();
    await new Promise((r) => setTimeout(r, 0));
  }
  await Promise.all(all);
  expect(order).toEqual(['a', 'b', 'push', 'c', 'd']);
  expect(most).toBe(2);
});

/** A gate whose jobs are held open until the test releases them, recording who got in and when. */
function heldGate(limit: number) {
  const gate = new Gate(limit);
  const order: string[] = [];
  const releases: Array<() => void> = [];
  const job = (name: string, key: string, urgent = false) =>
    gate.run(async () => {
      order.push(name);
      await new Promise<void>((r) => releases.push(r));
    }, { urgent, key });
  const tick = () => new Promise((r) => setTimeout(r, 0));
  return { gate, order, releases, job, tick };
}

it('one workspace flooding the gate leaves a place for another, which goes next in turn', async () => {
  const { gate, order, releases, job, tick } = heldGate(4);
  const offA = gate.register('A');
  const offB = gate.register('B');
  const flood = Array.from({ length: 20 }, (_, i) => job(`a${i}`, 'A'));
  await tick();
  // A is capped at limit - reserve (3) while B is known: one place stays free for B.
  expect(order).toEqual(['a0', 'a1', 'a2']);
  expect(gate.holding('A')).toBe(3);
  const b = job('b0', 'B');
  await tick();
  expect(order.at(-1)).toBe('b0');
  // B's second pull, queued behind A's 16 waiting, goes in turn: behind one of A's, not all of them.
  const b2 = job('b1', 'B');
  await tick();
  releases.shift()!();
  await tick();
  expect(order.at(-1)).toBe('a3');
  releases.shift()!();
  await tick();
  expect(order.at(-1)).toBe('b1');
  // B leaves: A may take every place again.
  offB();
  while (releases.length) {
    releases.shift()!();
    await tick();
  }
  await Promise.all([b, b2]);
  expect(gate.holding('A')).toBeLessThanOrEqual(4);
  while (order.length < 22 || releases.length) {
    releases.shift()?.();
    await tick();
  }
  await Promise.all(flood);
  offA();
  expect(gate.waiting).toBe(0);
});

it('with one workspace alone the gate is not capped', async () => {
  const { gate, order, releases, job, tick } = heldGate(4);
  const off = gate.register('A');
  const all = Array.from({ length: 6 }, (_, i) => job(`a${i}`, 'A'));
  await tick();
  expect(order).toHaveLength(4);
  while (order.length < 6 || releases.length) {
    releases.shift()?.();
    await tick();
  }
  await Promise.all(all);
  off();
});

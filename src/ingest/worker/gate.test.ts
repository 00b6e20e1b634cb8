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
    }, urgent);
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

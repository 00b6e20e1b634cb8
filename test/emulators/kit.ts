import { afterEach, beforeEach } from 'vitest';
import { SimClock } from '../../src/sim/sim-clock.ts';
import { startPushSink, type PushSink } from '../../src/sim/emulators/push-sink.ts';
import type { TokenRegistry } from '../../src/sim/emulators/tokens.ts';

/** What each test of an emulator's own HTTP suite gets afresh; the fields are replaced before every test. */
export interface EmulatorTestKit<E> {
  emu: E;
  clock: SimClock;
  /** A bearer token of the kit's user. */
  token: string;
  sink: PushSink;
  /** A request with the token (and a JSON body when given): its status and its JSON, undefined when empty. */
  send(method: string, url: string, body?: unknown): Promise<{ status: number; json: any }>;
}

/**
 * Registers the suite's beforeEach/afterEach: before each test a new emulator on a SimClock at `t0`
 * (`start` passes the clock on), a token for `user` and a push receiver; after it, both closed, so
 * that no test sees another's mail, watches or pushes.
 */
export function emulatorTestKit<E extends { tokens: TokenRegistry; close(): Promise<void> }>(user: string, t0: number, start: (clock: SimClock) => Promise<E>): EmulatorTestKit<E> {
  const kit = {
    async send(method: string, url: string, body?: unknown) {
      const res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${kit.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    },
  } as EmulatorTestKit<E>;
  beforeEach(async () => {
    kit.clock = new SimClock(t0);
    kit.emu = await start(kit.clock);
    kit.token = kit.emu.tokens.issue(user);
    kit.sink = await startPushSink();
  });
  afterEach(async () => {
    await kit.emu.close();
    await kit.sink.close();
  });
  return kit;
}

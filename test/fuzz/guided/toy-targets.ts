import type { FuzzTarget } from './targets.ts';

/**
 * Targets for guided.test.ts's watchdog test, loaded by the fuzzing thread in place of
 * targets.ts: `spin` never returns on an input that starts with "X" (a hang the thread cannot
 * report itself), and returns at once on anything else, its seed included.
 */
const spin: FuzzTarget = {
  name: 'spin',
  kind: 'text',
  sources: ['toy-targets'],
  dictionary: ['X'],
  seeds: () => [{ name: 'hello', bytes: new Uint8Array(Buffer.from('hello')) }],
  run(input) {
    if (input[0] !== 0x58) return;
    for (;;) {
      // spins until the watchdog ends the thread
    }
  },
};

export const TARGETS: Record<string, FuzzTarget> = { spin };

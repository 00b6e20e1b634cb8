import { beforeAll, describe } from 'vitest';
import { mailBedSkipReason, startMailBed } from './mailbed.ts';

/**
 * describe() for tests that need the mail test bed: starts it (idempotent) before the block, and
 * skips the block, saying why, only where mailBedSkipReason() allows it (never in CI).
 */
export function describeMailBed(name: string, fn: () => void): void {
  const reason = mailBedSkipReason();
  if (reason) {
    describe.skip(`${name} (skipped: ${reason})`, fn);
    return;
  }
  describe(name, () => {
    beforeAll(() => startMailBed(), 300_000);
    fn();
  });
}

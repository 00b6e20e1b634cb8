import { mailBedSkipReason, resetMailBed, startMailBed } from './mailbed.ts';

/**
 * Global setup of the 'mail' project (vitest.config.ts): vitest runs a project's global setup
 * only when the run includes at least one of its files, so unit-test runs never start Postfix or
 * Dovecot. In CI a bed that does not come up fails the run here, loudly; locally, without the
 * packages, the mail tests skip themselves with the reason (mailBedSkipReason).
 *
 * Each run starts from empty mailboxes and an empty queue: tests that make the same Message-IDs
 * on every run (seeded random, simulated clock) would otherwise find the copies of earlier runs.
 * The mail project runs its files one at a time after the unit tests (vitest.config.ts), so
 * nothing of this run is in flight yet; a concurrent run of another checkout on the same machine
 * would be disturbed, which is why CI runs alone. CADENZA_MAILBED_SHARED=1 skips this reset for
 * engineers running single files from several checkouts at once on one bed: each file still
 * resets the users it owns.
 */
export default async function setup(): Promise<void> {
  const skip = mailBedSkipReason();
  if (skip) {
    console.warn(`\n${skip}\n`);
    return;
  }
  const t0 = Date.now();
  await startMailBed();
  if (process.getuid?.() === 0 && !process.env.CADENZA_MAILBED_SHARED) await resetMailBed();
  if (process.env.CADENZA_MAILBED_VERBOSE) console.log(`mail test bed ready in ${Date.now() - t0} ms`);
}

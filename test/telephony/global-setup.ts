import { makeAudio, telBed, telBedSkipReason } from './telbed.ts';

/**
 * Global setup of the 'telephony' project (vitest.config.ts): starts the bed (telbed.sh) and makes
 * the calls' audio once; vitest runs it only when the run includes a telephony test. Locally,
 * without the packages, the tests skip themselves with the reason (telBedSkipReason); in CI a bed
 * that does not start fails here. The bed is stopped at the end (TELBED_KEEP=1 leaves it running
 * for the next run) so no daemon outlives the tests on a shared machine.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const skip = telBedSkipReason();
  if (skip) {
    console.warn(`\n${skip}\n`);
    return async () => {};
  }
  await telBed('start');
  await makeAudio();
  return async () => {
    if (!process.env.TELBED_KEEP) await telBed('stop');
  };
}

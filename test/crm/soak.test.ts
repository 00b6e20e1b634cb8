import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../stores.ts';
import { runCrmSoak, SOAK_KINDS } from './soak.ts';

/**
 * The short variant of the CRM soak (`npm run bench -- crm-soak` runs 50,000 per CRM): 1,500
 * activities to each CRM's emulator through a 3-hour outage, lost answers and 429s, on a
 * simulated clock. Nothing lost, nothing written twice, the CRM's limit never exceeded, and the
 * backlog after the outage written at the limit's pace, not in a flood.
 */
describe.each(testBackends())('CRM soak, short (%s)', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  }, 60_000);
  afterAll(async () => store?.destroy());

  it.each(SOAK_KINDS)('%s: 400 activities through a 2-hour outage: 0 lost, 0 duplicated, within the limit', async (kind) => {
    const r = await runCrmSoak({ store, kind, activities: 400, arrivalMinutes: 10, outage: { fromMinute: 5, hours: 2 }, seed: `soak-test-${kind}-${backend}`, lostAnswerRate: 0.05, injected429Rate: 0.03 });
    expect(r.pending).toBe(0);
    expect(r.rejected).toBe(0);
    expect(r.written + r.skipped).toBe(400);
    expect(r.skipped).toBeGreaterThan(0);
    expect(r.lost).toBe(0);
    expect(r.duplicated).toBe(0);
    // The faults happened, and the writer went through them.
    expect(r.lostAnswersInjected).toBeGreaterThan(0);
    expect(r.injected429).toBeGreaterThan(0);
    expect(r.refusedForLimit).toBe(0);
    expect(r.peakPerWindow).toBeLessThanOrEqual(r.limit.requests);
    // An outage of 2 hours is probed now and then, not hammered (5 s doubling to 5 min, jittered).
    expect(r.outageProbes).toBeGreaterThan(2 * 6);
    expect(r.outageProbes).toBeLessThan(2 * 60);
    expect(r.resumedAfterS).not.toBeNull();
    expect(r.resumedAfterS!).toBeLessThan(10 * 60);
  }, 120_000);
});

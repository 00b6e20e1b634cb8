import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import type { CrmActivity, CrmConnector, CrmLimits, CrmWriteResult } from './connector.ts';
import { CrmWriter } from './writer.ts';

/**
 * A writer that takes a connection over (the last one crashed: its lease ran out) counts the
 * requests the last one made in the CRM's window (migration 0057, CrmWriter.saveWindow): with an
 * hour's window, as Salesforce's share of its daily allocation is, starting empty would send the
 * CRM twice its limit in that hour. The CRM here is a connector that logs each request's time.
 */
const HOUR = 3_600_000;
const limits: CrmLimits = { maxBatch: 1, requests: 10, windowMs: HOUR, requestsPerBatch: 1 };

function loggingCrm(clock: SimClock, log: number[]): CrmConnector {
  return {
    kind: 'salesforce',
    limits,
    prepare: async () => undefined,
    writeActivities: async (batch: readonly CrmActivity[]): Promise<CrmWriteResult[]> => {
      log.push(clock.now());
      return batch.map((a) => ({ externalId: a.externalId, status: 'written', crmId: `crm-${a.externalId}` }));
    },
  };
}

/** The most requests the log holds in any window of `windowMs`. */
function busiestWindow(log: readonly number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < log.length; i++) {
    while (log[i]! - log[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('a writer taking a connection over keeps the CRM’s window (pglite)', () => {
  let store: TestStore;
  const T0 = Date.UTC(2026, 11, 2, 9);
  beforeAll(async () => {
    store = await freshStore('pglite');
  }, 60_000);
  afterAll(async () => store?.destroy());

  async function connectionWith(activities: number, clock: SimClock): Promise<string> {
    const workspaceId = randomUUID();
    const connectionId = randomUUID();
    await store.db.insertInto('workspace').values({ id: workspaceId, name: 'takeover', time_zone: 'UTC' }).execute();
    await store.db.insertInto('crm_connection').values({ id: connectionId, workspace_id: workspaceId, kind: 'salesforce', base_url: 'http://127.0.0.1:1', credentials: Buffer.from('x'), prepared_at: new Date(clock.now()) }).execute();
    const at = new Date(clock.now());
    await store.db
      .insertInto('crm_activity')
      .values(Array.from({ length: activities }, (_, n) => ({ connection_id: connectionId, workspace_id: workspaceId, external_id: `cadenza:t:${n}`, kind: 'email_sent', email: `p${n}@prospects.test`, payload: '{}', occurred_at: at, next_attempt_at: at })))
      .execute();
    return connectionId;
  }

  async function crashAndTakeOver(save: boolean): Promise<{ log: number[]; written: number }> {
    const clock = new SimClock(T0);
    const log: number[] = [];
    const crm = loggingCrm(clock, log);
    const id = await connectionWith(25, clock);
    const writer = (owner: string) => new CrmWriter({ store, clock, random: seededRandom(owner), owner, connectorFor: async () => ({ connector: crm, prepared: true }), leaseMs: 120_000 });
    const a = writer('crm:a');
    const first = await a.drain(id);
    expect(first.written).toBe(10);
    if (save) await a.saveWindow(id);
    // Process a dies; its lease runs out; process b takes the connection over within the hour.
    clock.advance(5 * 60_000);
    const b = writer('crm:b');
    let written = first.written;
    for (let i = 0; i < 200 && clock.now() < T0 + 2 * HOUR; i++) {
      const r = await b.drain(id);
      written += r.written;
      await b.saveWindow(id);
      clock.advanceTo(Math.max(clock.now() + 1_000, r.nextAt ?? clock.now() + 60_000));
    }
    return { log, written };
  }

  it('with the stored window: never more than the limit in any hour, and everything written once the window allows', async () => {
    const { log, written } = await crashAndTakeOver(true);
    expect(busiestWindow(log, HOUR)).toBe(10);
    expect(written).toBe(20);
    // The second ten waited for the first ten to leave the window.
    expect(log[10]! - log[0]!).toBeGreaterThanOrEqual(HOUR);
  });

  it('without it (the gap this closes): the new writer sends twice the limit in that hour', async () => {
    const { log } = await crashAndTakeOver(false);
    expect(busiestWindow(log, HOUR)).toBe(20);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { openStore, type Store } from '../store/store.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { PgCommitProxy } from '../../test/ops/pg-commit-proxy.ts';
import { makeWorld } from '../../test/fixtures/world.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { twoEmailsDefinition } from '../../test/fixtures/two-emails.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { claimNext, recordSent, recoverInFlight, type Claim, type OutboxDeps } from './outbox.ts';
import { recordAccepted } from './record-accepted.ts';

const T0 = Date.UTC(2026, 5, 1, 12, 0);
const def = twoEmailsDefinition();

// A COMMIT whose answer is lost (the primary dies, the network cuts) may have committed: the
// record of an accepted send treats it as unknown and re-reads, never as "not done". The proxy
// sits between Cadenza's pool and a real PostgreSQL; PGlite runs in-process, so it has no wire
// to cut.
describe.skipIf(!testBackends().includes('postgres'))('recording an accepted send through a lost COMMIT (PostgreSQL)', () => {
  let store: TestStore;
  let proxy: PgCommitProxy;
  let proxied: Store;
  let clock: SimClock;
  let deps: OutboxDeps;
  const random = seededRandom(46);

  beforeAll(async () => {
    store = await freshStore('postgres');
    const u = new URL(store.url!);
    proxy = new PgCommitProxy({ host: u.hostname, port: Number(u.port || 5432) });
    u.port = String(await proxy.listen());
    proxied = await openStore({ databaseUrl: u.toString(), poolSize: 2, failoverWaitMs: 2_000 });
  });
  afterAll(async () => {
    await proxied?.close();
    await proxy?.close();
    await store?.destroy();
  });

  async function claimOne(): Promise<Claim> {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    clock = new SimClock(T0);
    const world = await makeWorld(store, { leads: 1, mailboxes: 1, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    const seq = await applyDefinition(store, { clock, random }, world.workspaceId, def);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seq.sequenceId, leadIds: world.leadIds });
    const service = new EnrollmentService({ store: proxied, clock, random });
    while ((await service.fireDue(100)).length) {
      /* drain */
    }
    // The retry's pauses pass on the simulated clock at once.
    const stepping: Clock = { now: () => clock.now(), setTimer: (ms, fn) => clock.setTimer(ms, fn), sleep: async (ms) => clock.advance(ms) };
    deps = { store: proxied, service, clock: stepping, random, proof: 'copy_first' };
    const r = await claimNext(deps, world.mailboxIds[0]!);
    if (r.kind !== 'claimed') throw new Error(`expected a claim, got ${r.kind}`);
    return r.claim;
  }

  const requestState = async (id: string) => (await store.db.selectFrom('send_request').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;
  const sentEvents = async (enrollmentId: string) => (await store.db.selectFrom('event').select('type').where('enrollment_id', '=', enrollmentId).where('type', '=', 'step_sent').execute()).length;
  const outbound = async () => (await store.db.selectFrom('message').select('id').where('direction', '=', 'outbound').execute()).length;

  it('COMMIT applied, answer lost: the retry finds it recorded and records nothing twice', async () => {
    const c = await claimOne();
    const cutsBefore = proxy.cuts;
    proxy.arm('cut_after_commit');
    const warnings: unknown[] = [];
    const marked = await recordAccepted({ ...deps, log: { warn: (o: unknown) => warnings.push(o) } as never }, c, clock.now(), { subject: 'Hi' });
    expect(proxy.cuts).toBe(cutsBefore + 1);
    expect(warnings).toHaveLength(1); // one lost answer, one retry
    expect(marked).toBe(false); // the first try had marked it: the retry only read that
    expect(await requestState(c.requestId)).toBe('sent');
    expect(await sentEvents(c.enrollmentId)).toBe(1);
    expect(await outbound()).toBe(1);
  });

  it('COMMIT never reached the server: the retry records the send, once', async () => {
    const c = await claimOne();
    proxy.arm('cut_before_commit');
    const marked = await recordAccepted(deps, c, clock.now(), { subject: 'Hi' });
    expect(marked).toBe(true);
    expect(await requestState(c.requestId)).toBe('sent');
    expect(await sentEvents(c.enrollmentId)).toBe(1);
    expect(await outbound()).toBe(1);
  });

  it('without the retry, the error is not "not done": a lost answer left it sent, a lost COMMIT leaves it in flight, and recovery makes that unknown, not queued', async () => {
    const c = await claimOne();
    proxy.arm('cut_after_commit');
    await expect(recordSent(deps, c, clock.now())).rejects.toThrow();
    expect(await requestState(c.requestId)).toBe('sent');
    expect(await recoverInFlight(deps, c.mailboxId)).toBe(0);

    const d = await claimOne();
    proxy.arm('cut_before_commit');
    await expect(recordSent(deps, d, clock.now())).rejects.toThrow();
    expect(await requestState(d.requestId)).toBe('in_flight');
    expect(await recoverInFlight(deps, d.mailboxId)).toBe(1);
    expect(await requestState(d.requestId)).toBe('unknown');
    expect(await sentEvents(d.enrollmentId)).toBe(0);
  });
});

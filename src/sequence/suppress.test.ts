import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import type { Tx } from '../store/store.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { makeWorld, type World } from '../../test/fixtures/world.ts';
import { applyDefinition } from './apply-definition.ts';
import { bulkEnroll } from './bulk-enroll.ts';
import { validateDefinition } from './definition.ts';
import { EnrollmentService } from './enrollment-service.ts';
import { moveEnrollment } from './move.ts';
import { liftSuppression, stopCompany, suppress } from './suppress.ts';

const T0 = Date.UTC(2026, 2, 2, 12, 0); // a Monday

const src = fileURLToPath(new URL('../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(p);
    return d.name.endsWith('.ts') && !d.name.endsWith('.test.ts') ? [p] : [];
  });
}

describe('one owner of promise 6', () => {
  // Tests and test/ fixtures seed the table directly; the product never does.
  it('only sequence/sql/suppression.ts writes the suppression table (insert, update, delete), and only suppress.ts calls it', () => {
    const writes = /(insert\s+into|update|delete\s+from)\s+suppression\b|(insertInto|updateTable|deleteFrom)\(\s*['"]suppression['"]\s*\)/i;
    const files = sourceFiles(src).map((f) => ({ path: relative(src, f).split('\\').join('/'), text: readFileSync(f, 'utf8') }));
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((f) => writes.test(f.text)).map((f) => f.path)).toEqual(['sequence/sql/suppression.ts']);
    // The simulation plants a bypass on purpose (its 'bypass-suppress' fault) to show that a check catches one.
    const importers = files.filter((f) => /from '[./]*(sequence\/)?sql\/suppression\.ts'/.test(f.text)).map((f) => f.path);
    expect(importers.sort()).toEqual(['sequence/suppress.ts', 'sim/simulation.ts']);
  });
});

describe.each(testBackends())('suppress() on %s', (backend) => {
  let store: TestStore;
  let clock: SimClock;
  let world: World;
  let svc: EnrollmentService;
  let first: string;
  let second: string;
  const random = seededRandom(11);

  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  const def = (key: string, steps: Array<Record<string, unknown>>) =>
    validateDefinition({ key, name: key, window: 'any', mailboxes: ['rep0@acme.test'], steps, jitter_minutes: 0 });
  const twoEmails = [
    { key: 'intro', type: 'email', subject: 'Hello', body: 'Hi' },
    { key: 'bump', type: 'email', delay: '2 days', body: 'Bump' },
  ];

  /** Leads 0..7 in two sequences; leads 0 and 7 share a company domain (prospect0.test). */
  async function setup() {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    clock = new SimClock(T0);
    world = await makeWorld(store, { leads: 8, mailboxes: 1, nowMs: T0, random });
    svc = new EnrollmentService({ store, clock, random });
    first = (await applyDefinition(store, { clock, random }, world.workspaceId, def('first', twoEmails))).sequenceId;
    second = (await applyDefinition(store, { clock, random }, world.workspaceId, def('second', twoEmails))).sequenceId;
    for (const s of [first, second]) await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: s, leadIds: world.leadIds });
  }
  const enrollmentOf = async (sequenceId: string, lead: number) =>
    (await store.db.selectFrom('enrollment').select('id').where('sequence_id', '=', sequenceId).where('lead_id', '=', world.leadIds[lead]!).executeTakeFirstOrThrow()).id;
  const states = async (lead: number) =>
    (await store.db.selectFrom('enrollment').select(['state', 'state_reason']).where('lead_id', '=', world.leadIds[lead]!).orderBy('id').execute()).map((e) => `${e.state}: ${e.state_reason ?? ''}`);
  const row = (email: string) => store.db.selectFrom('suppression').select(['reason', 'source']).where('workspace_id', '=', world.workspaceId).where('email_norm', '=', email).executeTakeFirst();
  const journal = async (id: string) => (await store.db.selectFrom('event').select('type').where('enrollment_id', '=', id).orderBy('id').execute()).map((e) => e.type);
  const inTx = <T>(fn: (tx: Tx) => Promise<T>) => store.db.transaction().execute(fn);

  it('writes the suppression (first reason and source kept) and stops every live enrollment of the address through the engine', async () => {
    await setup();
    const now = clock.now();
    const r = await inTx((tx) => suppress(tx, svc, world.workspaceId, [{ email: 'lead1@prospect1.test', reason: 'complaint', source: 'test: first' }], { now }));
    const ids = [await enrollmentOf(first, 1), await enrollmentOf(second, 1)];
    expect(r.added).toEqual(['lead1@prospect1.test']);
    expect([...r.stopped].sort()).toEqual([...ids].sort());
    expect(r.applied.map((a) => a.enrollmentId).sort()).toEqual([...ids].sort());
    expect(await states(1)).toEqual(['stopped: address suppressed', 'stopped: address suppressed']);
    // Through the engine: journalled once each, queued sends cancelled.
    for (const id of ids) expect(await journal(id)).toEqual(['enrolled', 'stop']);
    expect(await store.db.selectFrom('send_request').select('state').where('enrollment_id', 'in', ids).where('state', '=', 'queued').execute()).toEqual([]);
    // Another lead is untouched.
    expect(await states(2)).toEqual(['active: ', 'active: ']);

    // Again, with another reason: the first stays, nothing is added or stopped.
    const again = await inTx((tx) => suppress(tx, svc, world.workspaceId, [{ email: 'lead1@prospect1.test', reason: 'unsubscribe', source: 'test: second' }], { now }));
    expect(again).toEqual({ added: [], stopped: [], applied: [] });
    expect(await row('lead1@prospect1.test')).toEqual({ reason: 'complaint', source: 'test: first' });
  });

  it("spares the enrollment the caller transitions itself, and the one it was moved to; suppresses an address that is no lead's", async () => {
    await setup();
    const target = await enrollmentOf(first, 3);
    const moved = await moveEnrollment({ store, clock, random, service: svc }, { workspaceId: world.workspaceId, enrollmentId: await enrollmentOf(second, 3), sequenceId: (await applyDefinition(store, { clock, random }, world.workspaceId, def('third', twoEmails))).sequenceId });
    expect(moved.outcome).toBe('moved');
    const successor = moved.outcome === 'moved' ? moved.newEnrollmentId : '';
    const movedFrom = await enrollmentOf(second, 3);
    const r = await inTx((tx) =>
      suppress(tx, svc, world.workspaceId, [
        { email: 'lead3@prospect3.test', reason: 'hard_bounce', source: 'test' },
        { email: 'nobody@elsewhere.test', reason: 'hard_bounce', source: 'test' },
      ], { now: clock.now(), spare: [target, movedFrom] }),
    );
    expect(r.added.sort()).toEqual(['lead3@prospect3.test', 'nobody@elsewhere.test']);
    expect(r.stopped).toEqual([]);
    expect((await store.db.selectFrom('enrollment').select('state').where('id', 'in', [target, successor]).execute()).map((e) => e.state)).toEqual(['active', 'active']);
    // Unspared, the next suppression of the address stops them.
    const next = await inTx((tx) => suppress(tx, svc, world.workspaceId, [{ email: 'lead3@prospect3.test', reason: 'hard_bounce', source: 'test' }], { now: clock.now() }));
    expect(next.stopped.sort()).toEqual([target, successor].sort());
  });

  it('the engine suppresses through it: a hard bounce stops the lead elsewhere once, journalled once', async () => {
    await setup();
    const own = await enrollmentOf(first, 4);
    const other = await enrollmentOf(second, 4);
    const r = await svc.apply(own, { type: 'bounce', hard: true, reason: '5.1.1 user unknown' });
    expect(r.next.state).toBe('bounced');
    expect(await row('lead4@prospect4.test')).toEqual({ reason: 'hard_bounce', source: `enrollment:${own}` });
    expect(await journal(own)).toEqual(['enrolled', 'bounce']);
    expect(await journal(other)).toEqual(['enrolled', 'stop']);
  });

  it('the company rule stops the live enrollments at the domain, except the address that replied, and suppresses nobody', async () => {
    await setup();
    // lead0 and lead7 are both at prospect0.test.
    const applied = await inTx((tx) => stopCompany(tx, svc, world.workspaceId, { domain: 'prospect0.test', exceptEmail: 'lead0@prospect0.test', reason: 'prospect0.test replied' }, clock.now()));
    expect(applied.map((a) => a.result.next.state)).toEqual(['stopped', 'stopped']);
    expect(await states(7)).toEqual(['stopped: prospect0.test replied', 'stopped: prospect0.test replied']);
    expect(await states(0)).toEqual(['active: ', 'active: ']);
    expect(await store.db.selectFrom('suppression').select('email_norm').execute()).toEqual([]);
  });

  it('lifting a suppression removes it and restarts nothing', async () => {
    await setup();
    await inTx((tx) => suppress(tx, svc, world.workspaceId, [{ email: 'lead5@prospect5.test', reason: 'manual', source: 'test' }], { now: clock.now() }));
    expect(await liftSuppression(store.db, world.workspaceId, 'lead5@prospect5.test')).toBe(true);
    expect(await liftSuppression(store.db, world.workspaceId, 'lead5@prospect5.test')).toBe(false);
    expect(await states(5)).toEqual(['stopped: address suppressed', 'stopped: address suppressed']);
  });
});

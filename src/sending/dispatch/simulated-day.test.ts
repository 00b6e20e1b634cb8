/**
 * A simulated Monday through the real engine: a sequence with a 10-mailbox pool at 30 a day, 400
 * leads enrolled and their first step fired, the dispatcher plans, and a sender claims each request
 * at its planned instant, reserving its slot in the claim. The pool sends in parallel: ~300 that
 * day, each mailbox within its caps and gaps, none outside its working day.
 */
import { sql } from 'kysely';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { validateDefinition } from '../../sequence/definition.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { makeWorld } from '../../../test/fixtures/world.ts';
import { Dispatcher } from './dispatcher.ts';
import { claimAndSend } from '../../../test/dispatch/seed.ts';

const MIN = 60_000;
const MON_0600_NY = Date.UTC(2026, 5, 1, 10, 0);
const NY = 'America/New_York';

describe.each(testBackends())('a simulated day on %s', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(async () => {
    await store.destroy();
  });

  it('a 10-mailbox pool at 30 a day sends ~300 that day, in parallel, each mailbox within its limits', async () => {
    const clock = new SimClock(MON_0600_NY);
    const random = seededRandom(5);
    const world = await makeWorld(store, { leads: 400, mailboxes: 10, nowMs: clock.now(), random, zones: [NY], countries: [null] });
    const def = validateDefinition({
      key: 'outreach',
      name: 'Outreach',
      window: 'Mon-Fri 08:00-18:00',
      holidays: false,
      jitter_minutes: 0,
      mailboxes: Array.from({ length: 10 }, (_, i) => `rep${i}@acme.test`),
      steps: [{ key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'Hello' }],
    });
    const seq = await applyDefinition(store, { clock, random }, world.workspaceId, def);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: seq.sequenceId, leadIds: world.leadIds });
    const service = new EnrollmentService({ store, clock, random });
    clock.advanceTo(Date.UTC(2026, 5, 1, 12, 0)); // 08:00 in New York: every first step falls due
    while ((await service.fireDue(200)).length) {
      /* drain */
    }
    const dispatcher = new Dispatcher({ store, clock });
    const first = await dispatcher.runOnce();
    expect(first).toMatchObject({ mailboxes: 10, requests: 400, planned: 400, unplaced: 0 });

    const endOfMonday = DateTime.fromISO('2026-06-02T00:00', { zone: NY }).toMillis();
    const sent = new Map<string, number[]>(world.mailboxIds.map((id) => [id, []]));
    let refused = 0;
    let lastReplan = clock.now();
    for (let guard = 0; guard < 2000; guard++) {
      const due = (
        await sql<{ mailbox_id: string; at: Date }>`
          select mailbox_id, min(send_at) as at from send_request
          where state = 'queued' and send_at is not null group by mailbox_id order by at`.execute(store.db)
      ).rows;
      if (due.length === 0 || due[0]!.at.getTime() >= endOfMonday) break;
      const now = due[0]!.at.getTime();
      clock.advanceTo(now);
      for (const d of due) {
        if (d.at.getTime() > now) break;
        const r = await claimAndSend(store, d.mailbox_id, now);
        if (r.kind === 'sent') sent.get(d.mailbox_id)!.push(now);
        if (r.kind === 'refused') refused++;
      }
      if (now - lastReplan > 60 * MIN) {
        await dispatcher.runOnce();
        lastReplan = now;
      }
    }
    const counts = [...sent.values()].map((l) => l.length);
    const total = counts.reduce((a, b) => a + b, 0);
    expect(refused).toBe(0);
    expect(total).toBeGreaterThanOrEqual(285);
    expect(total).toBeLessThanOrEqual(300);
    for (const list of sent.values()) {
      expect(list.length).toBeGreaterThanOrEqual(27);
      expect(list.length).toBeLessThanOrEqual(30);
      for (let i = 1; i < list.length; i++) expect(list[i]! - list[i - 1]!).toBeGreaterThanOrEqual(8 * MIN);
      for (const t of list) {
        const local = DateTime.fromMillis(t, { zone: NY });
        const m = local.hour * 60 + local.minute;
        expect(m).toBeGreaterThanOrEqual(8 * 60 + 20);
        expect(m).toBeLessThan(17 * 60 + 40);
      }
    }
    // Not released on whole minutes: the seconds and milliseconds are spread out (about 1 in 60
    // sends lands in the first second of a minute by chance, 5 of 300).
    const all = [...sent.values()].flat();
    expect(all.filter((t) => t % MIN < 1000).length).toBeLessThanOrEqual(15);
    expect(new Set(all.map((t) => t % MIN)).size).toBeGreaterThanOrEqual(all.length - 5);
    // In parallel: the mailboxes' sends interleave through the day, not one mailbox after another.
    const firstSends = [...sent.values()].map((l) => l[0]!);
    expect(Math.max(...firstSends) - Math.min(...firstSends)).toBeLessThan(60 * MIN);
    // What was not sent on Monday is planned for Tuesday, not dropped.
    const left = await store.db.selectFrom('send_request').select(['send_at']).where('state', '=', 'queued').execute();
    expect(left).toHaveLength(400 - total);
    for (const r of left) expect(DateTime.fromMillis(r.send_at!.getTime(), { zone: NY }).toISODate()).toBe('2026-06-02');
  });
});

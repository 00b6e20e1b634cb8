/**
 * "If no reply after N business days" is a business-day delay: a reply stops the enrollment
 * before it runs out. Business days skip the public holidays of the lead's country, and of the
 * workspace's holidays country for a lead that has none (sql/calendar-country.ts), on both stores.
 */
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { testBackends, useFreshStore } from '../../test/stores.ts';
import { makeWorld } from '../../test/fixtures/world.ts';
import { applyDefinition } from './apply-definition.ts';
import { bulkEnroll } from './bulk-enroll.ts';
import { validateDefinition } from './definition.ts';
import { EnrollmentService } from './enrollment-service.ts';

const MON = Date.UTC(2026, 6, 13, 8, 0); // Monday 13 July 2026, 10:00 in Paris; the 14th is Bastille Day
const at = (day: number) => new Date(Date.UTC(2026, 6, day, 8, 0)).toISOString();

describe.each(testBackends())('business days and the workspace holidays (%s)', (backend) => {
  const storeOf = useFreshStore(backend);

  it("a lead without a country skips the workspace country's holidays; a lead with one, its own; a reply before the delay runs out stops it", async () => {
    const store = storeOf();
    await sql`truncate table workspace, event cascade`.execute(store.db);
    const clock = new SimClock(MON);
    const random = seededRandom(`holidays-${backend}`);
    const world = await makeWorld(store, { leads: 3, nowMs: MON, random, zones: ['Europe/Paris'], countries: [null, 'US', null] });
    await store.db.updateTable('workspace').set({ country: 'FR' }).where('id', '=', world.workspaceId).execute();
    const svc = new EnrollmentService({ store, clock, random });
    const def = validateDefinition({
      key: 'outreach',
      name: 'Outreach',
      window: 'Mon-Fri 09:00-17:00',
      jitter_minutes: 0,
      steps: [
        { key: 'intro', type: 'email', subject: 'Hi', body: 'Hello' },
        { key: 'nudge', type: 'email', delay: '1 business day', body: 'No reply after a business day: a nudge' },
      ],
    });
    const { sequenceId } = await applyDefinition(store, { clock, random }, world.workspaceId, def);
    expect((await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId, leadIds: world.leadIds })).enrolled).toBe(3);
    await svc.fireDue(10);
    const rows = await store.db.selectFrom('enrollment').select(['id', 'lead_id', 'next_step_id']).where('sequence_id', '=', sequenceId).execute();
    for (const e of rows) await svc.apply(e.id, { type: 'step_sent', stepId: e.next_step_id!, at: MON });
    const due = async (leadId: string) => (await store.db.selectFrom('enrollment').select(['state', 'due_at']).where('lead_id', '=', leadId).executeTakeFirstOrThrow());
    const [noCountry, us, replies] = world.leadIds;
    // The workspace's country (France): Tuesday is Bastille Day, the nudge waits for Wednesday.
    expect((await due(noCountry!)).due_at!.toISOString()).toBe(at(15));
    // The lead's own country (the US): Tuesday is a working day.
    expect((await due(us!)).due_at!.toISOString()).toBe(at(14));
    // A reply before then stops the enrollment: the nudge never comes.
    const e = rows.find((r) => r.lead_id === replies)!;
    clock.advance(3_600_000);
    await svc.apply(e.id, { type: 'reply', messageId: '<yes@prospect2.test>' });
    expect(await due(replies!)).toEqual({ state: 'replied', due_at: null });
    clock.advance(3 * 86_400_000);
    await svc.fireDue(10);
    expect(await store.db.selectFrom('send_request').select('id').where('enrollment_id', '=', e.id).execute()).toHaveLength(1);
  });
});

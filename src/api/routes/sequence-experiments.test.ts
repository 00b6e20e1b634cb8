import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { seededRandom } from '../../common/random.ts';
import { toWall } from '../../calendar/zone.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { SimClock } from '../../sim/sim-clock.ts';

const DAY = 86_400_000;

/**
 * Sequence experiments end to end (issue 18): the definition through PUT, enrollment through the
 * real bulk enrollment (the arm stored once), each step run by the real enrollment service on a
 * simulated clock, then GET …/experiments: exposures per arm from the moment the arms part ways,
 * outcomes in the window, the arms described.
 */
describe.each(testBackends())('sequence experiments through the API (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let sequenceId: string;
  const t0 = Date.now() - 60 * DAY;
  const arms = new Map<string, { content: string; timing: string }>();
  const bumpHours: Array<{ arm: string; hour: number }> = [];
  const variantSent: Array<{ arm: string; step: string; variant: string }> = [];
  const replied = new Set<string>();

  beforeAll(async () => {
    h = await apiHarness(backend);
    const w = await seedWorkspace(h.store, 'Seq Exp', 'owner@seqexp.test');
    b = await login(h.app, 'owner@seqexp.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    const csv = ['email,first_name,time_zone', ...Array.from({ length: 24 }, (_, i) => `p${i}@lead${i}.test,P${i},America/Chicago`)].join('\n');
    expect((await b.call('POST', `${base}/leads/import`, { csv })).statusCode).toBe(200);
    const email = (key: string, delay: string, a: string, bb: string) => ({ key, type: 'email', delay, subject: key === 'intro' ? 'Hi' : '', body: a, variantKey: 'a', weight: 1, variants: [{ key: 'b', subject: key === 'intro' ? 'Hello' : '', body: bb, weight: 1 }] });
    const seq = await b.call('PUT', `${base}/sequences`, {
      key: 'seqexp',
      name: 'Sequence experiments',
      window: 'Mon-Fri 08:00-18:00',
      holidays: false,
      jitterMinutes: 20,
      steps: [email('intro', '0 minutes', 'Hi A', 'Hi B'), email('follow', '2 days', 'Follow A', 'Follow B'), { key: 'bump', type: 'email', delay: '3 days', body: 'Bump' }],
      experiments: [
        { key: 'content', arms: [{ key: 'a', steps: [{ step: 'intro', variant: 'a' }, { step: 'follow', variant: 'a' }] }, { key: 'b', steps: [{ step: 'intro', variant: 'b' }, { step: 'follow', variant: 'b' }] }] },
        { key: 'timing', outcome: 'replied', arms: [{ key: 'morning', steps: [{ step: 'bump', sendHours: '08:00-10:00', delay: '2 business days' }] }, { key: 'afternoon', steps: [{ step: 'bump', sendHours: '14:00-16:00', delay: '4 business days' }] }] },
      ],
    });
    expect(seq.statusCode, seq.body).toBe(200);
    sequenceId = seq.json().sequenceId;
    const db = h.store.db;
    const clock = new SimClock(t0);
    const random = seededRandom(`seqexp-${backend}`);
    const leads = await db.selectFrom('lead').select('id').where('workspace_id', '=', w.workspaceId).execute();
    expect((await bulkEnroll(h.store, { clock, random }, { workspaceId: w.workspaceId, sequenceId, leadIds: leads.map((l) => l.id) })).enrolled).toBe(24);
    const service = new EnrollmentService({ store: h.store, clock, random });
    const steps = Object.fromEntries((await db.selectFrom('step').select(['id', 'key']).where('sequence_id', '=', sequenceId).execute()).map((s) => [s.id, s.key]));
    const variantKey = Object.fromEntries((await db.selectFrom('variant').select(['id', 'key']).execute()).map((v) => [v.id, v.key]));
    const rows = await db.selectFrom('enrollment').select(['id', 'experiment_arms']).where('sequence_id', '=', sequenceId).orderBy('id').execute();
    const index = new Map(rows.map((r, i) => [r.id, i]));
    for (const r of rows) {
      const stored = r.experiment_arms as Record<string, string>;
      arms.set(r.id, { content: stored.content!, timing: stored.timing! });
    }
    // Three rounds, one per send; in each, the enrollments in the order of their due times (the clock only goes forward).
    // A third of them reply half a day before the bump is due, after it was planned.
    for (let k = 0; k < 3; k++) {
      const live = await db.selectFrom('enrollment').select(['id', 'due_at', 'next_step_id']).where('sequence_id', '=', sequenceId).where('state', '=', 'active').orderBy('due_at').orderBy('id').execute();
      for (const e of live) {
        const arm = arms.get(e.id)!;
        const due = e.due_at!.getTime();
        if (steps[e.next_step_id!] === 'bump') {
          bumpHours.push({ arm: arm.timing, hour: new Date(toWall('America/Chicago', due)).getUTCHours() });
          if (index.get(e.id)! % 3 === 0) {
            clock.advanceTo(Math.max(clock.now(), due - DAY / 2));
            await service.apply(e.id, { type: 'reply' });
            replied.add(e.id);
            continue;
          }
        }
        clock.advanceTo(Math.max(clock.now(), due));
        await service.apply(e.id, { type: 'step_due' });
        const req = await db.selectFrom('send_request').select(['variant_id', 'step_id']).where('enrollment_id', '=', e.id).where('step_id', '=', e.next_step_id!).executeTakeFirstOrThrow();
        if (steps[req.step_id] !== 'bump') variantSent.push({ arm: arm.content, step: steps[req.step_id]!, variant: variantKey[req.variant_id!]! });
        await service.apply(e.id, { type: 'step_sent', stepId: req.step_id, at: clock.now() });
      }
    }
    expect(clock.now()).toBeLessThan(Date.now() - 20 * DAY);
  }, 120_000);
  afterAll(() => h?.close());

  it('stores one arm per experiment at enrollment, and sends each enrollment its arm\'s variant on every step the arm fixes', () => {
    expect(arms.size).toBe(24);
    expect(new Set([...arms.values()].map((a) => a.content))).toEqual(new Set(['a', 'b']));
    expect(variantSent.length).toBe(48);
    for (const s of variantSent) expect(s.variant, `${s.step}`).toBe(s.arm);
  });

  it("plans the timed step inside its arm's hours in the prospect's zone", () => {
    expect(bumpHours.length).toBe(24);
    for (const x of bumpHours) {
      if (x.arm === 'morning') expect(x.hour >= 8 && x.hour < 10, `morning at ${x.hour}h`).toBe(true);
      else expect(x.hour >= 14 && x.hour < 16, `afternoon at ${x.hour}h`).toBe(true);
    }
  });

  it('reports each sequence experiment with its arms, their choices, exposures from where the arms part and outcomes in the window', async () => {
    const r = await b.call('GET', `${base}/sequences/${sequenceId}/experiments`);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    // The steps' own variants are fixed by the experiment: no step experiment is reported for them.
    const [content, timing] = body.sequenceExperiments;
    expect(content.key).toBe('content');
    expect(content.kind).toBe('content');
    expect(content.steps).toEqual(['intro', 'follow']);
    expect(timing.kind).toBe('timing');
    expect(timing.arms.map((a: { key: string; choices: unknown }) => [a.key, a.choices])).toEqual([
      ['morning', [{ step: 'bump', delay: '2 business days', sendHours: '08:00-10:00' }]],
      ['afternoon', [{ step: 'bump', delay: '4 business days', sendHours: '14:00-16:00' }]],
    ]);
    const count = (exp: 'content' | 'timing', arm: string, only?: Set<string>) => [...arms].filter(([id, a]) => a[exp] === arm && (!only || only.has(id))).length;
    for (const a of content.arms) {
      expect(a.exposures).toBe(count('content', a.key));
      expect(a.closed).toBe(a.exposures);
      expect(a.outcomes.replied).toBe(count('content', a.key, replied));
    }
    for (const a of timing.arms) {
      // Every enrollment reached the bump's planning (the reply came after it): all are exposed.
      expect(a.exposures).toBe(count('timing', a.key));
      expect(a.outcomes.replied).toBe(count('timing', a.key, replied));
    }
    expect(timing.winner).toBeNull();
    expect(timing.minSampleReached).toBe(false);
    expect(body.experiments).toEqual([]);
  });
});

/**
 * Bulk enrollment of N leads (default 100k) into one sequence, as one operation, on PGlite (a
 * folder on disk) and on PostgreSQL. Target: under 10 s on PostgreSQL for 100k.
 *   npm run bench -- bulk-enroll [--n=100000] [--backends=pglite,postgres]
 */
import { seededRandom } from '../src/common/random.ts';
import { applyDefinition } from '../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../src/sequence/definition.ts';
import { SimClock } from '../src/sim/sim-clock.ts';
import { benchStore, flag, seedLeads } from './support/backends.ts';

export const definition = validateDefinition({
  key: 'bench',
  name: 'Bench',
  window: 'Mon-Fri 08:30-17:30',
  mailboxes: ['rep@bench.test'],
  steps: [
    { key: 'intro', type: 'email', delay: '0 minutes', subject: 'Hi', body: 'Hello' },
    { key: 'call', type: 'call', delay: '2 business days', title: 'Call' },
    { key: 'bump', type: 'email', delay: '3 days', body: 'Bump' },
  ],
});

export default async function bulkEnrollBench(args: string[]): Promise<Record<string, unknown>> {
  const n = Number(flag(args, 'n', '100000'));
  const backends = flag(args, 'backends', 'pglite,postgres').split(',') as Array<'pglite' | 'postgres'>;
  const figures: Record<string, unknown> = { leads: n };
  for (const backend of backends) {
    const b = await benchStore(backend);
    try {
      const clock = new SimClock(Date.UTC(2026, 10, 30, 9, 0));
      const random = seededRandom(42);
      const { workspaceId, leadIds } = await seedLeads(b.store, n, clock.now(), random);
      const seq = await applyDefinition(b.store, { clock, random }, workspaceId, definition);
      const t0 = process.hrtime.bigint();
      const r = await bulkEnroll(b.store, { clock, random }, { workspaceId, sequenceId: seq.sequenceId, leadIds });
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      if (r.enrolled !== n) throw new Error(`expected ${n} enrolled, got ${r.enrolled} (${r.refused.length} refused)`);
      // Enrolling them all again is refused lead by lead, with a reason: measured too.
      const t1 = process.hrtime.bigint();
      const again = await bulkEnroll(b.store, { clock, random }, { workspaceId, sequenceId: seq.sequenceId, leadIds });
      const refuseSeconds = Number(process.hrtime.bigint() - t1) / 1e9;
      if (again.refused.length !== n) throw new Error('second enrollment should refuse every lead');
      console.log(`${backend.padEnd(8)} enrolled ${n.toLocaleString('en')} leads in ${seconds.toFixed(2)} s (${Math.round(n / seconds).toLocaleString('en')}/s); refused them all again in ${refuseSeconds.toFixed(2)} s`);
      figures[`${backend}_seconds`] = round(seconds);
      figures[`${backend}_leads_per_s`] = Math.round(n / seconds);
      figures[`${backend}_refuse_all_seconds`] = round(refuseSeconds);
    } finally {
      await b.drop();
    }
  }
  if (typeof figures.postgres_seconds === 'number') figures.postgres_target_met = (figures.postgres_seconds as number) < 10 * (n / 100_000);
  return figures;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

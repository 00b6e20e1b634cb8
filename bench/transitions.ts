/**
 * Transitions applied per second through the store: step due -> send request, fired by
 * EnrollmentService.fireDue in batches (the scheduler's path), on PGlite and on PostgreSQL.
 *   npm run bench -- transitions [--n=20000] [--batch=500] [--backends=pglite,postgres]
 */
import { seededRandom } from '../src/common/random.ts';
import { applyDefinition } from '../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../src/sequence/bulk-enroll.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { SimClock } from '../src/sim/sim-clock.ts';
import { definition } from './bulk-enroll.ts';
import { benchStore, flag, seedLeads } from './support/backends.ts';

export default async function transitionsBench(args: string[]): Promise<Record<string, unknown>> {
  const n = Number(flag(args, 'n', '20000'));
  const batch = Number(flag(args, 'batch', '500'));
  const backends = flag(args, 'backends', 'pglite,postgres').split(',') as Array<'pglite' | 'postgres'>;
  const figures: Record<string, unknown> = { enrollments: n, batch };
  for (const backend of backends) {
    const b = await benchStore(backend);
    try {
      const clock = new SimClock(Date.UTC(2026, 10, 30, 9, 0));
      const random = seededRandom(7);
      const { workspaceId, leadIds } = await seedLeads(b.store, n, clock.now(), random);
      const seq = await applyDefinition(b.store, { clock, random }, workspaceId, definition);
      await bulkEnroll(b.store, { clock, random }, { workspaceId, sequenceId: seq.sequenceId, leadIds });
      clock.advance(7 * 86_400_000); // every first step is due
      const service = new EnrollmentService({ store: b.store, clock, random });
      const t0 = process.hrtime.bigint();
      let fired = 0;
      for (;;) {
        const got = await service.fireDue(batch);
        fired += got.length;
        if (got.length < batch) break;
      }
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const requests = await b.store.db.selectFrom('send_request').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      if (fired !== n || Number(requests.n) !== n) throw new Error(`fired ${fired}, ${requests.n} send requests; expected ${n}`);
      console.log(`${backend.padEnd(8)} ${n.toLocaleString('en')} step-due transitions in ${seconds.toFixed(2)} s: ${Math.round(n / seconds).toLocaleString('en')}/s (${((seconds / n) * 1e6).toFixed(0)} µs each)`);
      figures[`${backend}_per_s`] = Math.round(n / seconds);
      figures[`${backend}_us_each`] = Math.round((seconds / n) * 1e6);
    } finally {
      await b.drop();
    }
  }
  return figures;
}

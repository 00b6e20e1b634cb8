/**
 * Removing a mailbox that holds N live enrollments (default 2,000) of a sequence whose pool has a
 * second mailbox: half have sent their first email from it (they pause, through the engine), half
 * have not (they move to the other mailbox, with their queued request). Times the dry run (the
 * confirmation dialog's preview) and the removal, on PGlite (a folder on disk) and PostgreSQL.
 *   npm run bench -- mailbox-removal [--n=2000] [--backends=pglite,postgres]
 */
import { seededRandom } from '../src/common/random.ts';
import { newId } from '../src/common/ids.ts';
import { removeMailbox } from '../src/sending/mailbox-removal.ts';
import { applyDefinition } from '../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../src/sequence/bulk-enroll.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { SimClock } from '../src/sim/sim-clock.ts';
import { definition } from './bulk-enroll.ts';
import { benchStore, flag, seedLeads } from './support/backends.ts';

export default async function mailboxRemovalBench(args: string[]): Promise<Record<string, unknown>> {
  const n = Number(flag(args, 'n', '2000'));
  const backends = flag(args, 'backends', 'pglite,postgres').split(',') as Array<'pglite' | 'postgres'>;
  const figures: Record<string, unknown> = { enrollments: n };
  for (const backend of backends) {
    const b = await benchStore(backend);
    try {
      const clock = new SimClock(Date.UTC(2026, 10, 30, 9, 0));
      const random = seededRandom(42);
      const db = b.store.db;
      const { workspaceId, leadIds } = await seedLeads(b.store, n, clock.now(), random);
      const gone = (await db.selectFrom('mailbox').select('id').where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()).id;
      const stays = newId(clock.now(), random);
      await db.insertInto('mailbox').values({ id: stays, workspace_id: workspaceId, email: 'other@bench.test', provider: 'smtp_imap' }).execute();
      const seq = await applyDefinition(b.store, { clock, random }, workspaceId, { ...definition, mailboxes: ['rep@bench.test', 'other@bench.test'] });
      await bulkEnroll(b.store, { clock, random }, { workspaceId, sequenceId: seq.sequenceId, leadIds });
      await db.updateTable('enrollment').set({ mailbox_id: gone }).where('workspace_id', '=', workspaceId).execute();
      const intro = (await db.selectFrom('step').select('id').where('sequence_id', '=', seq.sequenceId).where('key', '=', 'intro').executeTakeFirstOrThrow()).id;
      const enrollments = (await db.selectFrom('enrollment').select('id').where('workspace_id', '=', workspaceId).orderBy('id').execute()).map((e) => e.id);
      // Even rows: first email sent from the mailbox (a thread); odd rows: first email queued on it.
      const rows = enrollments.map((e, i) => ({ id: newId(clock.now(), random), workspace_id: workspaceId, enrollment_id: e, step_id: intro, mailbox_id: gone, state: i % 2 === 0 ? ('sent' as const) : ('queued' as const), due_at: new Date(clock.now()) }));
      for (let i = 0; i < rows.length; i += 5_000) await db.insertInto('send_request').values(rows.slice(i, i + 5_000)).execute();
      const service = new EnrollmentService({ store: b.store, clock, random });
      const req = { workspaceId, mailboxId: gone, by: null, enrollments: 'reassign' as const };

      const t0 = process.hrtime.bigint();
      const preview = await removeMailbox({ store: b.store, clock, service }, { ...req, dryRun: true });
      const dryMs = Number(process.hrtime.bigint() - t0) / 1e6;
      const t1 = process.hrtime.bigint();
      const done = await removeMailbox({ store: b.store, clock, service }, { ...req, dryRun: false });
      const removeMs = Number(process.hrtime.bigint() - t1) / 1e6;
      if (done.reassigned.length !== Math.floor(n / 2) || done.paused.length !== Math.ceil(n / 2)) throw new Error(`unexpected split: ${done.reassigned.length} moved, ${done.paused.length} paused`);
      if (preview.reassigned.length !== done.reassigned.length) throw new Error('the preview and the removal disagree');
      console.log(`${backend.padEnd(8)} ${n.toLocaleString('en')} enrollments (${done.reassigned.length} moved, ${done.paused.length} paused): dry run ${Math.round(dryMs)} ms, removal ${Math.round(removeMs)} ms`);
      figures[`${backend}_dry_run_ms`] = Math.round(dryMs);
      figures[`${backend}_remove_ms`] = Math.round(removeMs);
    } finally {
      await b.drop();
    }
  }
  return figures;
}

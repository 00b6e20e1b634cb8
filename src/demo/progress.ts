import { sql } from 'kysely';
import { ALL_TIME, perSequence, replyToStop, type ReplyToStop } from '../ops/figures.ts';
import type { Store } from '../store/store.ts';

/**
 * What the demo has done so far, per sequence, read from the store (what the engine, the senders
 * and the ingestion recorded), not from the simulation's own bookkeeping. Sent, replied and
 * reply-to-stop are the figures of ops/figures.ts over the whole journal, as the Analytics screen
 * and `cadenza status` count them; the rest are enrollment states and counts of rows.
 */
export interface SequenceProgress {
  key: string;
  name: string;
  enrolled: number;
  sent: number;
  replied: number;
  bounced: number;
  /** Enrollments that got an out-of-office note (and so paused), and those paused right now. */
  outOfOffice: number;
  pausedNow: number;
  unsubscribed: number;
  finished: number;
  callTasks: number;
}

export interface DemoProgress {
  /** The demo clock's time. */
  at: number;
  sequences: SequenceProgress[];
  inbound: number;
  suppressed: number;
  /** Every stop or pause by mail so far (real ms). */
  replyToStop: ReplyToStop;
}

export async function readProgress(store: Store, workspaceId: string, at: number): Promise<DemoProgress> {
  const rows = await sql<{
    id: string;
    key: string;
    name: string;
    enrolled: number;
    bounced: number;
    ooo: number;
    paused: number;
    unsubscribed: number;
    finished: number;
    calls: number;
  }>`
    select s.id, s.key, s.name,
      (select count(*)::int from enrollment e where e.sequence_id = s.id) as enrolled,
      (select count(*)::int from enrollment e where e.sequence_id = s.id and e.state = 'bounced') as bounced,
      (select count(distinct v.enrollment_id)::int from event v join enrollment e on e.id = v.enrollment_id
         where e.sequence_id = s.id and v.type = 'out_of_office' and v.workspace_id = ${workspaceId}) as ooo,
      (select count(*)::int from enrollment e where e.sequence_id = s.id and e.state = 'paused') as paused,
      (select count(*)::int from enrollment e where e.sequence_id = s.id and e.state = 'unsubscribed') as unsubscribed,
      (select count(*)::int from enrollment e where e.sequence_id = s.id and e.state = 'finished') as finished,
      (select count(*)::int from task t join enrollment e on e.id = t.enrollment_id where e.sequence_id = s.id and t.kind = 'call') as calls
    from sequence s where s.workspace_id = ${workspaceId} order by s.created_at, s.key`.execute(store.db);
  const inbound = await store.db.selectFrom('message').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).where('direction', '=', 'inbound').executeTakeFirstOrThrow();
  const suppressed = await store.db.selectFrom('suppression').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  const figures = await perSequence(store.db, workspaceId, ALL_TIME);
  return {
    at,
    sequences: rows.rows.map((x) => ({
      key: x.key,
      name: x.name,
      enrolled: x.enrolled,
      sent: figures.get(x.id)?.sent ?? 0,
      replied: figures.get(x.id)?.replied ?? 0,
      bounced: x.bounced,
      outOfOffice: x.ooo,
      pausedNow: x.paused,
      unsubscribed: x.unsubscribed,
      finished: x.finished,
      callTasks: x.calls,
    })),
    inbound: Number(inbound.n),
    suppressed: Number(suppressed.n),
    replyToStop: await replyToStop(store.db, workspaceId, ALL_TIME),
  };
}

/** One line per sequence, for a terminal. */
export function formatProgress(p: DemoProgress): string {
  const when = new Date(p.at).toISOString().slice(0, 16).replace('T', ' ');
  const r = p.replyToStop;
  const stops = r.count ? `, reply to stop (real time) p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms over ${r.count}` : '';
  const lines = [`[${when} UTC, simulated] inbound ${p.inbound}, suppressed ${p.suppressed}${stops}`];
  for (const s of p.sequences) {
    lines.push(
      `  ${s.name}: ${s.enrolled} enrolled, ${s.sent} sent, ${s.replied} replied, ${s.bounced} bounced, ${s.outOfOffice} out-of-office (${s.pausedNow} paused now), ${s.unsubscribed} unsubscribed, ${s.callTasks} call tasks, ${s.finished} finished`,
    );
  }
  return lines.join('\n');
}

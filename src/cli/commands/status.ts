import type { Command } from 'commander';
import { sql } from 'kysely';
import { resolveWorkspace } from '../../ops/workspace.ts';
import { deps, globals, output, table, withStore } from '../context.ts';

export function register(program: Command): void {
  program
    .command('status')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .action(async (o: { workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const now = new Date(deps.clock.now());
        const hour = new Date(deps.clock.now() + 3_600_000);
        const count = async (q: ReturnType<typeof sql<{ n: number }>>) => Number((await q.execute(store.db)).rows[0]?.n ?? 0);
        const [leads, suppressed, mailboxes, sequences, dueNow, dueHour, openTasks] = await Promise.all([
          count(sql`select count(*)::int as n from lead where workspace_id = ${w.id}`),
          count(sql`select count(*)::int as n from suppression where workspace_id = ${w.id}`),
          count(sql`select count(*)::int as n from mailbox where workspace_id = ${w.id} and removed_at is null`),
          count(sql`select count(*)::int as n from sequence where workspace_id = ${w.id}`),
          count(sql`select count(*)::int as n from enrollment where workspace_id = ${w.id} and state in ('active','paused') and due_at <= ${now}`),
          count(sql`select count(*)::int as n from enrollment where workspace_id = ${w.id} and state in ('active','paused') and due_at > ${now} and due_at <= ${hour}`),
          count(sql`select count(*)::int as n from task where workspace_id = ${w.id} and state = 'open'`),
        ]);
        const states = (await sql<{ state: string; n: number }>`select state, count(*)::int as n from enrollment where workspace_id = ${w.id} group by state order by state`.execute(store.db)).rows;
        const outbox = (await sql<{ state: string; n: number }>`select state, count(*)::int as n from send_request where workspace_id = ${w.id} group by state order by state`.execute(store.db)).rows;
        const data = {
          workspace: w,
          backend: store.backend,
          leads,
          suppressed,
          mailboxes,
          sequences,
          enrollments: Object.fromEntries(states.map((s) => [s.state, s.n])),
          sendRequests: Object.fromEntries(outbox.map((s) => [s.state, s.n])),
          timers: { overdue: dueNow, nextHour: dueHour },
          openTasks,
        };
        output(g, data, () =>
          [
            `workspace ${w.name} (${store.backend})`,
            `  ${leads} leads, ${suppressed} suppressed, ${mailboxes} mailboxes, ${sequences} sequences, ${openTasks} open tasks`,
            `  timers: ${dueNow} due now, ${dueHour} in the next hour`,
            '',
            'enrollments',
            table(states),
            '',
            'outbox',
            table(outbox),
          ].join('\n'),
        );
      });
    });
}

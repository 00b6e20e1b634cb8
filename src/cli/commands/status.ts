import type { Command } from 'commander';
import { sql } from 'kysely';
import { resolveWorkspace } from '../../ops/workspace.ts';
import { OVERDUE_MS, type BlockedCode } from '../../sequence/blocked.ts';
import { blockedOf, selectEnrollments } from '../../sequence/enrollment-query.ts';
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
        // Enrollments that cannot progress until a person acts, grouped by why (sequence/blocked.ts, as the API and web app say it).
        const candidates = await selectEnrollments(store.db, w.id)
          .where((eb) => eb.or([
            eb.and([eb('e.state', '=', 'paused'), eb('e.state_reason', '=', 'needs review')]),
            eb.and([eb('e.state', '=', 'active'), eb('e.waiting_for', '=', 'send')]),
            eb.and([eb('e.state', '=', 'active'), eb('e.waiting_for', '=', 'timer'), eb('e.due_at', '<', new Date(deps.clock.now() - OVERDUE_MS))]),
          ]))
          .limit(50_000)
          .execute();
        const blocked = new Map<BlockedCode, { code: BlockedCode; enrollments: number; reason: string; action: string; example: string }>();
        for (const r of candidates) {
          const b = blockedOf(r, deps.clock.now());
          if (!b) continue;
          const g = blocked.get(b.code);
          if (g) g.enrollments++;
          else blocked.set(b.code, { code: b.code, enrollments: 1, reason: b.reason, action: b.action, example: r.lead_email });
        }
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
          blocked: [...blocked.values()],
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
            ...(blocked.size
              ? ['', 'cannot progress until someone acts', ...[...blocked.values()].map((b) => `  ${b.enrollments} enrollment${b.enrollments === 1 ? '' : 's'} (e.g. ${b.example}): ${b.reason}\n    what to do: ${b.action}`)]
              : []),
          ].join('\n'),
        );
      });
    });
}

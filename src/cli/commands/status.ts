import type { Command } from 'commander';
import { resolveWorkspace } from '../../ops/workspace.ts';
import { OVERDUE_MS, type BlockedCode } from '../../sequence/blocked.ts';
import { blockedOf, possiblyBlockedEnrollments } from '../../sequence/enrollment-query.ts';
import { workspaceStatus } from '../../sequence/sql/workspace-status.ts';
import { deps, globals, output, table, withStore } from '../context.ts';

export function register(program: Command): void {
  program
    .command('status')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .action(async (o: { workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        const { leads, suppressed, mailboxes, sequences, dueNow, dueHour, openTasks, enrollments: states, sendRequests: outbox } = await workspaceStatus(store.db, w.id, deps.clock.now());
        // Enrollments that cannot progress until a person acts, grouped by why (sequence/blocked.ts, as the API and web app say it).
        const candidates = await possiblyBlockedEnrollments(store.db, w.id, new Date(deps.clock.now() - OVERDUE_MS), 50_000);
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

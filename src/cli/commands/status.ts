import type { Command } from 'commander';
import { cadenzaError } from '../../common/errors.ts';
import { headline } from '../../ops/figures.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { OVERDUE_MS, type BlockedCode } from '../../sequence/blocked.ts';
import { blockedOf, possiblyBlockedEnrollments } from '../../sequence/enrollment-query.ts';
import { workspaceStatus } from '../../sequence/sql/workspace-status.ts';
import { deps, globals, output, table, withStore } from '../context.ts';

export function register(program: Command): void {
  program
    .command('status')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--days <n>', 'UTC days of sent, replied and reply-to-stop figures, as the web app\'s Analytics counts them', '30')
    .action(async (o: { workspace?: string; days: string }, cmd: Command) => {
      const g = globals(cmd);
      const days = Number(o.days);
      if (!Number.isInteger(days) || days < 1 || days > 366) throw cadenzaError('INVALID_INPUT', `--days must be a whole number from 1 to 366, got '${o.days}'`, { option: 'days', value: o.days });
      await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        // The same figures, window and percentiles as GET …/analytics (ops/figures.ts).
        const f = await headline(store.db, w.id, deps.clock.now(), days);
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
          figures: {
            days,
            since: f.window.since.toISOString(),
            until: f.window.until.toISOString(),
            sent: f.totals.sends,
            replied: f.totals.replies,
            bounces: f.totals.bounces,
            unsubscribes: f.totals.unsubscribes,
            replyToStop: f.replyToStop,
          },
        };
        const r = f.replyToStop;
        output(g, data, () =>
          [
            `workspace ${w.name} (${store.backend})`,
            `  ${leads} leads, ${suppressed} suppressed, ${mailboxes} mailboxes, ${sequences} sequences, ${openTasks} open tasks`,
            `  timers: ${dueNow} due now, ${dueHour} in the next hour`,
            `  last ${days} days (${f.window.since.toISOString().slice(0, 10)} to ${new Date(f.window.until.getTime() - 1).toISOString().slice(0, 10)}, UTC): ${f.totals.sends} sent, ${f.totals.replies} replied, ${f.totals.bounces} bounces, ${f.totals.unsubscribes} unsubscribes`,
            `  reply to stop: ${r.count} stopped or paused by mail${r.count ? `; p50 ${ms(r.p50Ms)}, p90 ${ms(r.p90Ms)}, p99 ${ms(r.p99Ms)}` : ''}`,
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

/** A latency as the web app's Analytics screen writes it: ms below a second, then seconds, minutes. */
function ms(v: number | null): string {
  if (v === null) return '-';
  if (v < 1000) return `${v} ms`;
  if (v < 60_000) return `${+(v / 1000).toFixed(1)} s`;
  return `${+(v / 60_000).toFixed(1)} min`;
}

import { sql } from 'kysely';
import type { Clock } from '../../common/clock.ts';
import type { Store } from '../../store/store.ts';
import type { SystemMailer } from '../system-mailer.ts';
import { weeklyFigures, weeklyMessage } from './report.ts';
import { dueWeek } from './week.ts';

/**
 * The weekly report's job (issue 18): every few minutes, for each workspace whose report is on and
 * due (week.ts), claim the ISO week in weekly_report_run, then send through the system mailer.
 *
 * Once per week per workspace, across restarts and processes: the claim is one statement, an
 * insert of (workspace, week) that only one process can win; a restarted process finds the row. A
 * send that fails releases the claim with its error, and a later run tries again (three attempts in
 * all); a process that dies between the claim and the send leaves the week claimed, and that week
 * has no report: a report missed is better than two.
 *
 * Recipients: the members who asked for it (weekly_report_recipient), else the workspace's owners.
 * It runs in the API role: members' addresses (app_user) are the API's alone (ops/mtls/db-grants.ts).
 */

export const WEEKLY_REPORT_EVERY_MS = 5 * 60_000;
const MAX_ATTEMPTS = 3;

export interface WeeklyReportDeps {
  store: Store;
  clock: Clock;
  mailer: SystemMailer;
  /** Who claims (the process), recorded with the claim. */
  owner: string;
  /** The app's public URL, for the link to the Analytics screen. */
  appUrl?: string;
}

export interface WeeklyReportResult {
  sent: Array<{ workspaceId: string; week: string; recipients: number }>;
  failed: Array<{ workspaceId: string; week: string; error: string }>;
}

// -- name: weekly-report-claim
async function claim(d: WeeklyReportDeps, workspaceId: string, week: string): Promise<boolean> {
  const now = new Date(d.clock.now());
  const r = await sql<{ workspace_id: string }>`
    insert into weekly_report_run (workspace_id, iso_week, claimed_at, claimed_by, attempts)
    values (${workspaceId}, ${week}, ${now}, ${d.owner}, 1)
    on conflict (workspace_id, iso_week) do update set claimed_at = excluded.claimed_at, claimed_by = excluded.claimed_by, attempts = weekly_report_run.attempts + 1
      where weekly_report_run.claimed_at is null and weekly_report_run.sent_at is null and weekly_report_run.attempts < ${MAX_ATTEMPTS}
    returning workspace_id`.execute(d.store.db);
  return r.rows.length === 1;
}

/** The addresses the report goes to: the members who asked for it, else the owners. */
// -- name: weekly-report-recipients
export async function reportRecipients(store: Store, workspaceId: string): Promise<string[]> {
  const r = await sql<{ email: string }>`
    select u.email from app_user u
    where u.workspace_id = ${workspaceId}
      and (exists (select 1 from weekly_report_recipient x where x.workspace_id = u.workspace_id and x.user_id = u.id)
        or (u.role = 'owner' and not exists (select 1 from weekly_report_recipient x where x.workspace_id = ${workspaceId})))
    order by u.email`.execute(store.db);
  return r.rows.map((x) => x.email);
}

export async function sendDueWeeklyReports(d: WeeklyReportDeps): Promise<WeeklyReportResult> {
  const out: WeeklyReportResult = { sent: [], failed: [] };
  const now = d.clock.now();
  const on = await sql<{ workspace_id: string; name: string; time_zone: string; weekday: number; hour: number; updated_at: Date }>`
    select s.workspace_id, w.name, w.time_zone, s.weekday, s.hour, s.updated_at
    from weekly_report_setting s join workspace w on w.id = s.workspace_id
    where s.enabled
    order by s.workspace_id`.execute(d.store.db);
  for (const ws of on.rows) {
    const week = dueWeek(now, ws.time_zone, Number(ws.weekday), Number(ws.hour), new Date(ws.updated_at).getTime());
    if (week === null || !(await claim(d, ws.workspace_id, week))) continue;
    try {
      const to = await reportRecipients(d.store, ws.workspace_id);
      if (to.length === 0) throw new Error('nobody to send it to: no member asked for it and the workspace has no owner');
      const figures = await weeklyFigures(d.store.db, ws.workspace_id, ws.name, now, ws.time_zone);
      await d.mailer.send(weeklyMessage(figures, to.join(', '), d.appUrl));
      await d.store.db.updateTable('weekly_report_run').set({ sent_at: new Date(d.clock.now()), recipients: to.length, error: null }).where('workspace_id', '=', ws.workspace_id).where('iso_week', '=', week).execute();
      out.sent.push({ workspaceId: ws.workspace_id, week, recipients: to.length });
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      // Released for the next run to try again (claim() stops after MAX_ATTEMPTS).
      await d.store.db.updateTable('weekly_report_run').set({ claimed_at: null, error }).where('workspace_id', '=', ws.workspace_id).where('iso_week', '=', week).execute();
      out.failed.push({ workspaceId: ws.workspace_id, week, error });
    }
  }
  return out;
}

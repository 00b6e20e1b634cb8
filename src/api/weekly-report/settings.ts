import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';
import { reportInstant } from './week.ts';

/**
 * The weekly report's settings (migration 0070): on or off (off until an admin turns it on), the
 * ISO weekday and hour in the workspace's zone, and the members who asked for it.
 */

export interface WeeklyReportSettings {
  enabled: boolean;
  weekday: number;
  hour: number;
  /** The workspace's zone: the weekday and hour are its. */
  zone: string;
  /** Every member, and whether the report goes to them. */
  members: Array<{ userId: string; email: string; name: string | null; role: string; optedIn: boolean; receives: boolean }>;
  /** The next report's instant (ISO), null while it is off. */
  next: string | null;
  /** The last week's report recorded: sent, or the error of its last try. */
  last: { week: string; sentAt: string | null; recipients: number | null; error: string | null } | null;
}

const DEFAULTS = { enabled: false, weekday: 1, hour: 8 };

// -- name: weekly-report-settings
export async function readWeeklyReport(db: Db, workspaceId: string, nowMs: number): Promise<WeeklyReportSettings> {
  const s = await db.selectFrom('weekly_report_setting').select(['enabled', 'weekday', 'hour']).where('workspace_id', '=', workspaceId).executeTakeFirst();
  const { time_zone: zone } = await db.selectFrom('workspace').select('time_zone').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  const members = await sql<{ id: string; email: string; name: string | null; role: string; opted: boolean }>`
    select u.id, u.email, u.name, u.role, exists (select 1 from weekly_report_recipient x where x.workspace_id = u.workspace_id and x.user_id = u.id) as opted
    from app_user u where u.workspace_id = ${workspaceId} order by u.email`.execute(db);
  const anyOpted = members.rows.some((m) => m.opted);
  const last = await db.selectFrom('weekly_report_run').select(['iso_week', 'sent_at', 'recipients', 'error']).where('workspace_id', '=', workspaceId).orderBy('iso_week', 'desc').limit(1).executeTakeFirst();
  const cfg = s ? { enabled: s.enabled, weekday: Number(s.weekday), hour: Number(s.hour) } : DEFAULTS;
  let next: number | null = null;
  if (cfg.enabled) {
    next = reportInstant(nowMs, zone, cfg.weekday, cfg.hour);
    // This week's has passed: next week's (a week of 7 days in the zone, whatever its offset does).
    if (next <= nowMs) next = reportInstant(nowMs + 7 * 86_400_000, zone, cfg.weekday, cfg.hour);
  }
  return {
    ...cfg,
    zone,
    members: members.rows.map((m) => ({ userId: m.id, email: m.email, name: m.name, role: m.role, optedIn: m.opted, receives: m.opted || (!anyOpted && m.role === 'owner') })),
    next: next === null ? null : new Date(next).toISOString(),
    last: last ? { week: last.iso_week, sentAt: last.sent_at ? new Date(last.sent_at).toISOString() : null, recipients: last.recipients, error: last.error } : null,
  };
}

// -- name: weekly-report-save
export async function saveWeeklyReport(db: Db, workspaceId: string, s: { enabled: boolean; weekday: number; hour: number }, nowMs: number): Promise<void> {
  await db
    .insertInto('weekly_report_setting')
    .values({ workspace_id: workspaceId, ...s, updated_at: new Date(nowMs) })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ ...s, updated_at: new Date(nowMs) }))
    .execute();
}

/** A member asks for the report, or stops. */
// -- name: weekly-report-subscribe
export async function setWeeklyReportSubscription(db: Db, workspaceId: string, userId: string, receive: boolean, nowMs: number): Promise<void> {
  if (receive) {
    await db.insertInto('weekly_report_recipient').values({ workspace_id: workspaceId, user_id: userId, created_at: new Date(nowMs) }).onConflict((oc) => oc.doNothing()).execute();
  } else {
    await db.deleteFrom('weekly_report_recipient').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
  }
}

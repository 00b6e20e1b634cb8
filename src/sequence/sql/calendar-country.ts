/**
 * -- name: calendar-country
 * The country and region whose public holidays a lead's calendar skips (business-day delays, the
 * send window's days, an out-of-office return): the lead's own, else its workspace's holidays
 * country (the workspace settings' `holidaysCountry`). A region belongs to its country, so with
 * the workspace's country there is none. Every query that feeds a calendar (the engine's rows,
 * enrollment, the claim's and the pacing plan's window checks, the ingest targets, the
 * simulation's check) reads it through these fragments, so they never disagree on a lead's
 * holidays. `l` is the lead's alias; the workspace is read by its key only when the lead has no
 * country (coalesce evaluates lazily).
 */
import { sql } from 'kysely';

export const calendarCountry = sql`coalesce(l.country, (select cw.country from workspace cw where cw.id = l.workspace_id))`;
export const calendarRegion = sql`case when l.country is not null then l.region end`;
/** Both, as the columns `country` and `region`. */
export const calendarColumns = sql`${calendarCountry} as country, ${calendarRegion} as region`;

import { sql } from 'kysely';

/**
 * Which tracking_event rows (migration 0003) count as a person's open or click, and which series
 * each belongs to. One definition read by the analytics (ops/figure-facts.ts) and by saved segments
 * (leads/sql/segment-conditions.ts), so "opened" on a chart and in a segment are the same people.
 * It lives beside the schema because both readers sit above it and neither may import the other.
 */

type Expr = ReturnType<typeof sql>;

/** The tracking verdicts of a machine rather than a person: an image proxy's fetch, a link scanner's click. */
const AUTOMATIC_VERDICTS = sql`('proxy', 'scanner')`;

/** Whether tracking row `t` counts at all: an open or click of a known email, a scanner's click never. */
export function countedTracking(t: Expr) {
  return sql`(${t}.send_request_id is not null and ${t}.kind in ('open', 'click') and not (${t}.kind = 'click' and ${t}.verdict in ${AUTOMATIC_VERDICTS}))`;
}

/** The series a counted tracking row belongs to: a proxy's or scanner's open is 'openedAutomatically', not 'opened'. */
export function trackingSeries(t: Expr) {
  return sql`(case when ${t}.kind = 'click' then 'clicked' when ${t}.verdict in ${AUTOMATIC_VERDICTS} then 'openedAutomatically' else 'opened' end)`;
}

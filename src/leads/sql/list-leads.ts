import { sql, type ExpressionBuilder } from 'kysely';
import type { EnrollmentState } from '../../sequence/model.ts';
import { afterKey, type Keyset } from '../../store/keyset.ts';
import type { Database } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';
import { LEAD_VIEW_COLUMNS } from './leads.ts';
import { activityMatches, fieldMatches, type ActivityTest, type FieldCondition } from './segment-conditions.ts';

/** Which leads a list shows; every filter given must match. */
export interface LeadFilter {
  /** A substring of the email, "first last" name or company, any case. */
  search: string;
  /** ISO 3166-1 alpha-2, upper case. */
  country?: string | undefined;
  /** Only leads enrolled in this sequence (in `state` there, when given). */
  sequenceId?: string | undefined;
  /** Only leads with an enrollment in this state; 'none': leads not enrolled (in sequenceId, when given). */
  state?: EnrollmentState | 'none' | undefined;
  /** List hygiene (migration 0030): a verdict, 'review' (risky, no decision yet) or 'unchecked'. */
  verdict?: LeadHygieneFilter | undefined;
  /** Only leads with this tag (migration 0090). */
  tag?: string | undefined;
  /** Only leads in this static list (a segment's filter is merged in by the caller: lists/targets.ts). */
  listId?: string | undefined;
  /** Without `state`: true, leads with an enrollment (in sequenceId when given); false, leads with none there. */
  enrolled?: boolean | undefined;
  /** true: leads with an enrollment that stopped on their reply (state replied); false: none did. */
  replied?: boolean | undefined;
  /** A segment's lead-field conditions (title, company, time zone, a custom field), each must pass. */
  fields?: FieldCondition[] | undefined;
  /** A segment's activity conditions (opened, clicked, last contacted), times resolved, each must pass. */
  activity?: ActivityTest[] | undefined;
}

export const LEAD_HYGIENE_FILTERS = ['valid', 'risky', 'invalid', 'review', 'unchecked'] as const;
export type LeadHygieneFilter = (typeof LEAD_HYGIENE_FILTERS)[number];

/**
 * The workspace's leads matching the filter, newest first (created_at, then id), at most `limit`
 * after the key; and on the first page (no key) the number of matches, counted up to `countCap + 1`
 * only: a count of every match is a scan of all of them, capped it stays cheap on 100k leads.
 */
export async function listLeads(db: Db, workspaceId: string, f: LeadFilter, after: Keyset | undefined, limit: number, countCap: number) {
  const q = filteredLeads(db, workspaceId, f);
  let rows = q.select([...LEAD_VIEW_COLUMNS, 'created_at']);
  if (after) rows = rows.where(afterKey('created_at', 'id', after));
  const [leads, counted] = await Promise.all([
    rows.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute(),
    after
      ? undefined
      : db
          .selectFrom(q.select(sql`1`.as('one')).limit(countCap + 1).as('m'))
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
  ]);
  return { leads, matches: counted ? Number(counted.n) : null };
}

/** The workspace's leads matching the filter, as a query to select from (the list above, a segment, a bulk action's target). */
export function filteredLeads(db: Db, workspaceId: string, f: LeadFilter) {
  let q = db.selectFrom('lead').where('lead.workspace_id', '=', workspaceId);
  const s = f.search.trim();
  // search_text is lower-cased email, name and company (migration 0011) under a trigram index.
  if (s) q = q.where('search_text', 'ilike', `%${s.replace(/[\\%_]/g, (c) => '\\' + c)}%`);
  if (f.country) q = q.where('country', '=', f.country);
  if (f.verdict === 'unchecked') q = q.where('hygiene_verdict', 'is', null);
  else if (f.verdict === 'review') q = q.where('hygiene_verdict', '=', 'risky').where('hygiene_review', 'is', null);
  else if (f.verdict) q = q.where('hygiene_verdict', '=', f.verdict);
  const { tag, listId } = f;
  if (tag) q = q.where(({ exists, selectFrom }) => exists(selectFrom('lead_tag as t').select('t.lead_id').whereRef('t.lead_id', '=', 'lead.id').where('t.tag', '=', tag)));
  if (listId) q = q.where(({ exists, selectFrom }) => exists(selectFrom('lead_list_member as lm').select('lm.lead_id').whereRef('lm.lead_id', '=', 'lead.id').where('lm.list_id', '=', listId)));
  const { sequenceId, state, enrolled } = f;
  if (sequenceId || state || enrolled !== undefined) {
    // One probe of enrollment (lead_id, state) or (sequence_id, lead_id) per candidate lead.
    const enrollments = (eb: ExpressionBuilder<Database, 'lead'>) => {
      let e = eb.selectFrom('enrollment as e').select('e.id').whereRef('e.lead_id', '=', 'lead.id').where('e.workspace_id', '=', workspaceId);
      if (sequenceId) e = e.where('e.sequence_id', '=', sequenceId);
      if (state && state !== 'none') e = e.where('e.state', '=', state);
      return e;
    };
    const none = state ? state === 'none' : enrolled === false;
    q = q.where((eb) => (none ? eb.not(eb.exists(enrollments(eb))) : eb.exists(enrollments(eb))));
  }
  if (f.replied !== undefined) {
    const replied = (eb: ExpressionBuilder<Database, 'lead'>) =>
      eb.selectFrom('enrollment as r').select('r.id').whereRef('r.lead_id', '=', 'lead.id').where('r.workspace_id', '=', workspaceId).where('r.state', '=', 'replied');
    q = q.where((eb) => (f.replied ? eb.exists(replied(eb)) : eb.not(eb.exists(replied(eb)))));
  }
  for (const c of f.fields ?? []) q = q.where(fieldMatches(c));
  for (const a of f.activity ?? []) q = q.where(activityMatches(a, workspaceId));
  return q;
}

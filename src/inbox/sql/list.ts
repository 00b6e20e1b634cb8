/**
 * The unified inbox's list: inbound messages the reader may read (ingest/sql/inbox.ts
 * readableMessages, which applies the member's inbox scope), with what the list shows beside each
 * (company, sequence, rep, the caller's read mark, the team's triage and labels), narrowed by a
 * filter set (filter.ts), newest first, a page at a time.
 */
import { sql } from 'kysely';
import { readableMessages } from '../../ingest/sql/inbox.ts';
import type { MailReader } from '../../mailbox/sql/readable-mailboxes.ts';
import { afterKey, type Keyset } from '../../store/keyset.ts';
import type { Db } from '../../store/store.ts';
import { searchQuery, type InboxFilter } from '../filter.ts';
import { matchesSearch } from './search.ts';

export interface TeamLabelRef {
  id: string;
  name: string;
  color: string;
}

/** Who is reading: their read marks and "assigned to me" are theirs. Null: an API key, which reads as nobody (everything unread). */
export type InboxUser = string | null;

/** The readable messages with the list's columns beside them; `userId` decides `unread`. */
export function triagedMessages(db: Db, workspaceId: string, reader: MailReader, userId: InboxUser) {
  return readableMessages(db, workspaceId, reader)
    .leftJoin('lead as l', 'l.id', 'e.lead_id')
    .leftJoin('sequence as sq', 'sq.id', 'e.sequence_id')
    .leftJoin('inbox_state as st', 'st.message_id', 'm.id')
    .select([
      'l.company', 'l.first_name', 'l.last_name', 'e.sequence_id', 'sq.name as sequence_name', 'mb.user_id as rep_id',
      'st.assignee_user_id', 'st.snoozed_until', 'st.done_at',
      (userId === null ? sql<boolean>`true` : sql<boolean>`not exists (select 1 from inbox_read r where r.user_id = ${userId} and r.message_id = m.id)`).as('unread'),
      sql<TeamLabelRef[]>`coalesce((select json_agg(json_build_object('id', il.id, 'name', il.name, 'color', il.color) order by lower(il.name))
                            from inbox_message_label ml join inbox_label il on il.id = ml.label_id where ml.message_id = m.id), '[]'::json)`.as('team_labels'),
    ]);
}

export type TriagedRow = Awaited<ReturnType<ReturnType<typeof triagedMessages>['executeTakeFirstOrThrow']>>;

/** A snooze that came due after the message arrived: the message is listed from when it woke. */
const woke = (now: Date) => sql<boolean>`coalesce(st.snoozed_until <= ${now} and st.snoozed_until > m.at, false)`;

/**
 * The inbound messages matching the filter, newest first by when each came into the inbox
 * (`listed_at`: its arrival, or for a snooze that came due the moment it woke, so it returns to the
 * top as new mail would, not to its old place far down the list), then id; after `after`; at most
 * `limit`. `now` decides which snoozes came due. Two reads, each in an order an index serves (the
 * messages by arrival, message_inbound_workspace; the woken snoozes by wake time, migration 0122),
 * merged here: one ORDER BY over the two times would sort the whole workspace's inbox per page.
 */
export async function listInbox(db: Db, workspaceId: string, reader: MailReader, userId: InboxUser, f: InboxFilter, now: Date, after: Keyset | undefined, limit: number): Promise<Array<TriagedRow & { listed_at: Date }>> {
  let q = triagedMessages(db, workspaceId, reader, userId).where('m.direction', '=', 'inbound');
  const status = f.status ?? 'inbox';
  if (status === 'inbox') q = q.where('st.done_at', 'is', null).where((eb) => eb.or([eb('st.snoozed_until', 'is', null), eb('st.snoozed_until', '<=', now)]));
  if (status === 'snoozed') q = q.where('st.done_at', 'is', null).where('st.snoozed_until', '>', now);
  if (status === 'done') q = q.where('st.done_at', 'is not', null);
  const terms = searchQuery(f.q);
  if (terms) q = q.where(matchesSearch(workspaceId, terms));
  if (f.label) q = q.where('m.label', '=', f.label);
  if (f.intent) q = q.where('m.intent', '=', f.intent);
  if (f.teamLabelId) q = q.where(sql<boolean>`exists (select 1 from inbox_message_label ml where ml.message_id = m.id and ml.label_id = ${f.teamLabelId})`);
  if (f.sequenceId) q = q.where('e.sequence_id', '=', f.sequenceId);
  if (f.mailboxId) q = q.where('m.mailbox_id', '=', f.mailboxId);
  if (f.repId) q = q.where('mb.user_id', '=', f.repId);
  if (f.assigneeId) q = q.where('st.assignee_user_id', '=', f.assigneeId);
  if (f.folder) q = q.where('m.folder', '=', f.folder);
  if (f.needsReview === 'true') q = q.where('m.needs_review', '=', true).where('m.reviewed_at', 'is', null);
  if (f.needsReview === 'false') q = q.where((eb) => eb.or([eb('m.needs_review', '=', false), eb('m.reviewed_at', 'is not', null)]));
  // An API key has read nothing: everything is unread to it.
  if (f.unread === 'false' && userId === null) q = q.where(sql<boolean>`false`);
  if (f.unread !== undefined && userId !== null) {
    const read = sql<boolean>`exists (select 1 from inbox_read r where r.user_id = ${userId} and r.message_id = m.id)`;
    q = q.where(f.unread === 'true' ? sql<boolean>`not ${read}` : read);
  }
  let arrived = q.where(sql<boolean>`not ${woke(now)}`).select(sql<Date>`m.at`.as('listed_at'));
  let woken = q.where(woke(now)).select(sql<Date>`st.snoozed_until`.as('listed_at'));
  if (after) {
    arrived = arrived.where(afterKey('m.at', 'm.id', after));
    woken = woken.where(afterKey('st.snoozed_until', 'm.id', after));
  }
  const a = await arrived.orderBy('m.at', 'desc').orderBy('m.id', 'desc').limit(limit).execute();
  const b = await woken.orderBy('st.snoozed_until', 'desc').orderBy('m.id', 'desc').limit(limit).execute();
  // uuids in their text form compare as PostgreSQL compares them (same length, lower-case hex).
  return [...a, ...b].sort((x, y) => y.listed_at.getTime() - x.listed_at.getTime() || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0)).slice(0, limit);
}

/** A conversation's page: the newest this many messages, then as many again before them. */
export const THREAD_PAGE = 500;

/**
 * A message the reader may read (either direction) with its new text and HTML, and its thread: the
 * enrollment's conversation when there is one (our steps and their replies), else the provider's
 * thread. The newest `limit` messages before `before` (all of them when absent), shown oldest
 * first; `earlier` is the key of the page before, when there is one. A long thread opens on what
 * was said last, not on its first 500 messages. Undefined when the reader may not read it.
 */
export async function messageWithThread(db: Db, workspaceId: string, reader: MailReader, userId: InboxUser, messageRowId: string, before?: Keyset, limit = THREAD_PAGE) {
  const base = () => triagedMessages(db, workspaceId, reader, userId).select(['m.new_text', 'm.body_html', 'm.direction']);
  const message = await base().where('m.id', '=', messageRowId).executeTakeFirst();
  if (!message) return undefined;
  let t = base();
  if (message.enrollment_id) t = t.where('m.enrollment_id', '=', message.enrollment_id);
  else if (message.thread_id) t = t.where('m.thread_id', '=', message.thread_id);
  else t = t.where('m.id', '=', message.id);
  if (before) t = t.where(afterKey('m.at', 'm.id', before));
  const newestFirst = await t.orderBy('m.at', 'desc').orderBy('m.id', 'desc').limit(limit + 1).execute();
  const thread = newestFirst.slice(0, limit).reverse();
  const first = thread[0];
  const earlier: Keyset | undefined = newestFirst.length > limit && first ? { at: first.at, id: first.id } : undefined;
  return { message, thread, earlier };
}

/** A message's HTML (null: it has none), or undefined when the reader may not read it. */
export async function messageHtml(db: Db, workspaceId: string, reader: MailReader, messageRowId: string) {
  return readableMessages(db, workspaceId, reader).select('m.body_html').where('m.id', '=', messageRowId).executeTakeFirst();
}

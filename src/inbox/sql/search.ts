import { sql, type RawBuilder } from 'kysely';

/**
 * The inbox search's condition on `m`: its id among the workspace's inbound messages whose text
 * matches. The text is migration 0086's index expression (`message_inbox_search`), repeated
 * exactly (PostgreSQL uses an expression index only for the same expression), with the index's
 * predicate (inbound). `terms` is a tsquery built by filter.ts searchQuery, which lets only
 * letters, digits and its own operators through.
 *
 * The matches are found first, in a subquery fenced by OFFSET 0: the planner cannot estimate a
 * prefix match and otherwise walks the whole workspace newest first computing every message's
 * tsvector (600 ms at 50 000 messages, where the GIN lookup and a hash join take 17 ms; measured
 * on PostgreSQL 15, a word matching 11 messages; 40 ms for a word in all of them).
 */
export function matchesSearch(workspaceId: string, terms: string): RawBuilder<boolean> {
  return sql<boolean>`m.id in (
    select s.id from message s
     where s.workspace_id = ${workspaceId} and s.direction = 'inbound'
       and to_tsvector('simple'::regconfig,
             translate(coalesce(s.from_addr, ''), '@.<>"_+-', '         ') || ' ' || coalesce(s.subject, '') || ' ' || coalesce(s.excerpt, ''))
           @@ to_tsquery('simple'::regconfig, ${terms})
    offset 0)`;
}

/** Reads the counts the Getting started checklist is computed from (getting-started.ts). */
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../store/schema.ts';
import { isVerified } from '../mailbox/verification.ts';
import type { Db } from '../store/store.ts';
import { FACT_CAP, type ChecklistFacts } from './getting-started.ts';

const count = (n: unknown) => Number(n ?? 0);

/** How many rows the query finds, up to FACT_CAP + 1 (more: "more than 10,000"). */
function capped(db: Db, q: SelectQueryBuilder<Database, 'lead' | 'enrollment', { id: string }>) {
  return db
    .selectFrom(q.limit(FACT_CAP + 1).as('m'))
    .select(sql<number>`count(*)`.as('n'))
    .executeTakeFirst();
}

export async function checklistFacts(db: Db, workspaceId: string): Promise<ChecklistFacts> {
  const [mailboxes, domains, leads, sequences, enrollments] = await Promise.all([
    db.selectFrom('mailbox').select('settings').where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).execute(),
    db
      .selectFrom('domain_health')
      .select([sql<number>`count(*) filter (where status = 'ok')`.as('healthy'), sql<number>`count(*) filter (where status is not null)`.as('checked')])
      .where('workspace_id', '=', workspaceId)
      .where('purpose', '=', 'sending')
      .executeTakeFirst(),
    capped(db, db.selectFrom('lead').select('id').where('workspace_id', '=', workspaceId)),
    db
      .selectFrom('sequence as s')
      .select(sql<number>`count(*)`.as('n'))
      .where('s.workspace_id', '=', workspaceId)
      .where('s.status', '<>', 'archived')
      .where(({ exists, selectFrom }) => exists(selectFrom('step').select('step.id').whereRef('step.sequence_id', '=', 's.id').where('step.archived_at', 'is', null)))
      .executeTakeFirst(),
    capped(db, db.selectFrom('enrollment').select('id').where('workspace_id', '=', workspaceId)),
  ]);
  return {
    mailboxes: mailboxes.length,
    verifiedMailboxes: mailboxes.filter((m) => isVerified(m.settings)).length,
    healthyDomains: count(domains?.healthy),
    checkedDomains: count(domains?.checked),
    leads: count(leads?.n),
    sequencesWithSteps: count(sequences?.n),
    enrollments: count(enrollments?.n),
  };
}

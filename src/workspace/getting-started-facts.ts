/** Reads the counts the Getting started checklist is computed from (getting-started.ts). */
import { sql } from 'kysely';
import { isVerified } from '../mailbox/verification.ts';
import type { Db } from '../store/store.ts';
import type { ChecklistFacts } from './getting-started.ts';

const count = (n: unknown) => Number(n ?? 0);

export async function checklistFacts(db: Db, workspaceId: string): Promise<ChecklistFacts> {
  const [mailboxes, domains, leads, sequences, enrollments] = await Promise.all([
    db.selectFrom('mailbox').select('settings').where('workspace_id', '=', workspaceId).where('removed_at', 'is', null).execute(),
    db
      .selectFrom('domain_health')
      .select([sql<number>`count(*) filter (where status = 'ok')`.as('healthy'), sql<number>`count(*) filter (where status is not null)`.as('checked')])
      .where('workspace_id', '=', workspaceId)
      .where('purpose', '=', 'sending')
      .executeTakeFirst(),
    db.selectFrom('lead').select(sql<number>`count(*)`.as('n')).where('workspace_id', '=', workspaceId).executeTakeFirst(),
    db
      .selectFrom('sequence as s')
      .select(sql<number>`count(*)`.as('n'))
      .where('s.workspace_id', '=', workspaceId)
      .where('s.status', '<>', 'archived')
      .where(({ exists, selectFrom }) => exists(selectFrom('step').select('step.id').whereRef('step.sequence_id', '=', 's.id').where('step.archived_at', 'is', null)))
      .executeTakeFirst(),
    db.selectFrom('enrollment').select(sql<number>`count(*)`.as('n')).where('workspace_id', '=', workspaceId).executeTakeFirst(),
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

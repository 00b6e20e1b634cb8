/**
 * Declared winners (0058_experiment_winner.sql) and the experiments waiting for one.
 */
import { sql } from 'kysely';
import type { Db } from '../../store/store.ts';
import { inTx } from '../../store/in-tx.ts';

/** Sequences with an experiment that asks for an automatic winner and has none yet. */
// -- name: experiments-awaiting-winner
export async function sequencesAwaitingWinner(db: Db): Promise<Array<{ workspaceId: string; sequenceId: string }>> {
  const r = await sql<{ workspace_id: string; sequence_id: string }>`
    select distinct q.workspace_id, q.id as sequence_id
    from step st join sequence q on q.id = st.sequence_id
    where st.kind = 'email' and st.archived_at is null and q.status = 'active'
      and (st.config->'experiment'->>'autoWinner')::boolean is true
      and not exists (select 1 from experiment_winner w where w.step_id = st.id)`.execute(db);
  return r.rows.map((x) => ({ workspaceId: x.workspace_id, sequenceId: x.sequence_id }));
}

/**
 * Records a step's winner, once: a second declaration (two API processes) changes nothing. The
 * sequence's version goes up with it, so every process's cached definition (sequence-repo.ts)
 * reads the winner before it assigns the next enrollment. Returns whether this call declared it.
 */
// -- name: experiments-declare-winner
export async function declareWinner(db: Db, w: { sequenceId: string; stepId: string; variantId: string; at: Date; pValue: number; reason: string }): Promise<boolean> {
  return inTx(db, async (tx) => {
    const got = await tx
      .insertInto('experiment_winner')
      .values({ step_id: w.stepId, variant_id: w.variantId, declared_at: w.at, p_value: w.pValue, reason: w.reason })
      .onConflict((oc) => oc.column('step_id').doNothing())
      .returning('step_id')
      .executeTakeFirst();
    if (!got) return false;
    await tx.updateTable('sequence').set((eb) => ({ version: eb('version', '+', 1) })).where('id', '=', w.sequenceId).execute();
    return true;
  });
}

/** The declared winners of these steps. */
// -- name: experiments-winners
export async function winnersOf(db: Db, stepIds: readonly string[]) {
  if (stepIds.length === 0) return [];
  return db.selectFrom('experiment_winner').selectAll().where('step_id', 'in', [...stepIds]).execute();
}

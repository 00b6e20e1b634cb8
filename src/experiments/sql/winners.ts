/**
 * Declared winners (0058_experiment_winner.sql: a step's variants; 0112_sequence_experiment_winner.sql:
 * a sequence experiment's arms) and the experiments waiting for one.
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
      and not exists (select 1 from experiment_winner w where w.step_id = st.id)
    union
    select q.workspace_id, q.id
    from sequence q cross join lateral jsonb_array_elements(coalesce(q.settings->'experiments', '[]'::jsonb)) x
    where q.status = 'active' and (x->'settings'->>'autoWinner')::boolean is true
      and not exists (select 1 from sequence_experiment_winner w where w.sequence_id = q.id and w.experiment_key = x->>'key')`.execute(db);
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

/**
 * Records a sequence experiment's winner, once, with a bump of the sequence's version (as above:
 * every process's cached definition reads it before it enrolls the next lead). Returns whether
 * this call declared it.
 */
// -- name: experiments-declare-arm-winner
export async function declareArmWinner(db: Db, w: { sequenceId: string; experimentKey: string; armKey: string; at: Date; pValue: number; reason: string }): Promise<boolean> {
  return inTx(db, async (tx) => {
    const got = await tx
      .insertInto('sequence_experiment_winner')
      .values({ sequence_id: w.sequenceId, experiment_key: w.experimentKey, arm_key: w.armKey, declared_at: w.at, p_value: w.pValue, reason: w.reason })
      .onConflict((oc) => oc.columns(['sequence_id', 'experiment_key']).doNothing())
      .returning('arm_key')
      .executeTakeFirst();
    if (!got) return false;
    await tx.updateTable('sequence').set((eb) => ({ version: eb('version', '+', 1) })).where('id', '=', w.sequenceId).execute();
    return true;
  });
}

/** The declared winners of a sequence's own experiments. */
// -- name: experiments-arm-winners
export async function armWinnersOf(db: Db, sequenceId: string) {
  return db.selectFrom('sequence_experiment_winner').selectAll().where('sequence_id', '=', sequenceId).execute();
}

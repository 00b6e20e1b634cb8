import { cadenzaError } from '../common/errors.ts';
import type { Db } from '../store/store.ts';
import { FIXED_OWNERS, type FieldOwner, type SyncedField } from './field-ownership.ts';
import { changeOwners, effectiveOwners } from './ownership.ts';
import { checkStopRules, effectiveStopRules, stopRuleOverrides, type StopRules } from './stop-rules.ts';

/**
 * A connection's changes-in settings as admins see and change them (the crm routes): the
 * field-ownership map (fixed fields listed, never changeable) and the stop rules, and the
 * conflicts logged. Stored as overrides of the defaults (0055).
 */
export interface ChangeSettings {
  fieldOwners: Record<SyncedField, FieldOwner>;
  fixedFields: SyncedField[];
  stopRules: StopRules;
}

async function row(db: Db, workspaceId: string, connectionId: string) {
  const r = await db.selectFrom('crm_connection').select(['field_owners', 'stop_rules']).where('id', '=', connectionId).where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!r) throw cadenzaError('NOT_FOUND', 'no such CRM connection in this workspace');
  return r;
}

export async function changeSettings(db: Db, workspaceId: string, connectionId: string): Promise<ChangeSettings> {
  const r = await row(db, workspaceId, connectionId);
  return { fieldOwners: effectiveOwners(r.field_owners), fixedFields: [...FIXED_OWNERS], stopRules: effectiveStopRules(r.stop_rules) };
}

export async function updateChangeSettings(
  db: Db,
  workspaceId: string,
  connectionId: string,
  change: { fieldOwners?: Record<string, FieldOwner>; stopRules?: Partial<StopRules> },
): Promise<ChangeSettings> {
  const r = await row(db, workspaceId, connectionId);
  const owners = change.fieldOwners ? changeOwners(r.field_owners, change.fieldOwners) : undefined;
  let rules: Partial<StopRules> | undefined;
  if (change.stopRules) {
    const next = { ...effectiveStopRules(r.stop_rules), ...change.stopRules };
    checkStopRules(next);
    rules = stopRuleOverrides(next);
  }
  await db
    .updateTable('crm_connection')
    .set({ ...(owners ? { field_owners: JSON.stringify(owners) } : {}), ...(rules ? { stop_rules: JSON.stringify(rules) } : {}) })
    .where('id', '=', connectionId)
    .execute();
  return changeSettings(db, workspaceId, connectionId);
}

export interface ConflictView {
  id: number;
  crmId: string;
  email: string | null;
  field: string;
  crmValue: string | null;
  cadenzaValue: string | null;
  crmUpdatedAt: string;
  crmUpdatedBy: string | null;
  at: string;
}

/** The newest conflicts first, `limit` of them, before `before` (an id) when paging. */
export async function listConflicts(db: Db, workspaceId: string, connectionId: string, o: { limit: number; before?: number }): Promise<ConflictView[]> {
  await row(db, workspaceId, connectionId);
  let q = db.selectFrom('crm_conflict').selectAll().where('connection_id', '=', connectionId);
  if (o.before !== undefined) q = q.where('id', '<', o.before);
  const rows = await q.orderBy('id', 'desc').limit(o.limit).execute();
  return rows.map((r) => ({
    id: Number(r.id),
    crmId: r.crm_id,
    email: r.email,
    field: r.field,
    crmValue: r.crm_value,
    cadenzaValue: r.cadenza_value,
    crmUpdatedAt: new Date(r.crm_updated_at).toISOString(),
    crmUpdatedBy: r.crm_updated_by,
    at: new Date(r.at).toISOString(),
  }));
}

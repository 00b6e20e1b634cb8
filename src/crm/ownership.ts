import { cadenzaError } from '../common/errors.ts';
import { DEFAULT_FIELD_OWNERS, FIXED_OWNERS, SYNCED_FIELDS, type FieldOwner, type SyncedField } from './field-ownership.ts';

/**
 * A connection's field-ownership map: the defaults (field-ownership.ts) under the admin's
 * overrides (0055 field_owners); the fixed fields always keep their default owner, whatever is
 * stored. Only the overrides are stored, so a new synced field gets its default everywhere.
 */
export function effectiveOwners(stored: unknown): Record<SyncedField, FieldOwner> {
  const o = (stored ?? {}) as Record<string, unknown>;
  const out = { ...DEFAULT_FIELD_OWNERS };
  for (const f of SYNCED_FIELDS) {
    const v = o[f];
    if (!FIXED_OWNERS.has(f) && (v === 'crm' || v === 'cadenza')) out[f] = v;
  }
  return out;
}

/**
 * Applies an admin's change to the effective map and returns the overrides to store. A change of
 * a fixed field's owner is refused (naming it), a field Cadenza does not sync likewise.
 */
export function changeOwners(stored: unknown, change: Readonly<Record<string, FieldOwner>>): Record<string, FieldOwner> {
  const unknown = Object.keys(change).filter((f) => !(SYNCED_FIELDS as readonly string[]).includes(f));
  if (unknown.length) throw cadenzaError('INVALID_INPUT', `not synced fields: ${unknown.join(', ')} (${SYNCED_FIELDS.join(', ')})`, { field: 'fieldOwners' });
  const next = { ...effectiveOwners(stored) };
  for (const [f, owner] of Object.entries(change) as Array<[SyncedField, FieldOwner]>) {
    if (FIXED_OWNERS.has(f) && owner !== DEFAULT_FIELD_OWNERS[f]) throw cadenzaError('INVALID_INPUT', `the owner of ${f} is fixed (${DEFAULT_FIELD_OWNERS[f]})`, { field: 'fieldOwners' });
    next[f] = owner;
  }
  return Object.fromEntries(SYNCED_FIELDS.filter((f) => next[f] !== DEFAULT_FIELD_OWNERS[f]).map((f) => [f, next[f]]));
}

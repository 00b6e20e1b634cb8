/**
 * Field ownership (docs/crm.md "Field ownership"): each contact field synced with a CRM has one
 * owner per connection. The CRM's fields flow in and are never written by Cadenza; Cadenza's flow
 * out and are never taken from the CRM; a CRM-side edit of a Cadenza-owned field is logged as a
 * conflict, not flipped. Shared by the sync and the web app's Integrations screen (docs/web.md
 * "Integrations"): a plain module with no imports, so both read the same.
 */
export type FieldOwner = 'crm' | 'cadenza';

export const SYNCED_FIELDS = [
  'email',
  'firstName',
  'lastName',
  'company',
  'title',
  'phone',
  'ownerEmail',
  'lifecycleStage',
  'doNotContact',
  'cadenzaSequenceStatus',
  'cadenzaLastActivityAt',
] as const;

export type SyncedField = (typeof SYNCED_FIELDS)[number];
export type FieldOwners = Readonly<Record<SyncedField, FieldOwner>>;

/** Identity and ownership come from the CRM (its system of record); sequence state and last activity from Cadenza. */
export const DEFAULT_FIELD_OWNERS: FieldOwners = {
  email: 'crm',
  firstName: 'crm',
  lastName: 'crm',
  company: 'crm',
  title: 'crm',
  phone: 'crm',
  ownerEmail: 'crm',
  lifecycleStage: 'crm',
  doNotContact: 'crm',
  cadenzaSequenceStatus: 'cadenza',
  cadenzaLastActivityAt: 'cadenza',
};

/** Fields whose owner is fixed: the address is the join key, and Cadenza's own state is never the CRM's to set. */
export const FIXED_OWNERS: ReadonlySet<SyncedField> = new Set(['email', 'cadenzaSequenceStatus', 'cadenzaLastActivityAt']);

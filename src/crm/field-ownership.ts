/**
 * Field ownership: for each contact field synced between Cadenza and a CRM, which side's value
 * wins. The CRM is the system of record for who the person is and whether they may be contacted;
 * Cadenza owns what it alone knows, the sequence state and the last activity, which it writes to
 * the CRM's contact (CrmFieldWriter in connector.ts).
 *
 * These are the defaults of every connection. Until the API serves a connection's own map, the
 * web app's Integrations screen (docs/web.md "Integrations") shows this one: a plain constant with
 * no imports, so that the web app and the server read the same.
 */
export const CONTACT_FIELDS = ['email', 'firstName', 'lastName', 'company', 'title', 'phone', 'owner', 'lifecycleStage', 'doNotContact', 'sequenceStatus', 'lastActivity'] as const;
export type ContactField = (typeof CONTACT_FIELDS)[number];
export type FieldOwner = 'crm' | 'cadenza';
export type FieldOwners = Readonly<Record<ContactField, FieldOwner>>;

export const DEFAULT_FIELD_OWNERS: FieldOwners = {
  email: 'crm',
  firstName: 'crm',
  lastName: 'crm',
  company: 'crm',
  title: 'crm',
  phone: 'crm',
  owner: 'crm',
  lifecycleStage: 'crm',
  doNotContact: 'crm',
  sequenceStatus: 'cadenza',
  lastActivity: 'cadenza',
};

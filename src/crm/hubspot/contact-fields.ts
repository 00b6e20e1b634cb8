import type { CrmContact } from '../connector.ts';

/**
 * Cadenza's contact fields in HubSpot's words (the contacts guide's default properties, and the two
 * custom ones prepare() creates), both ways: a contact as search answers it becomes a CrmContact,
 * and a Cadenza-owned field becomes the property writeContactFields sets.
 *
 * Do not contact is `hs_email_optout` ("Unsubscribed from all email"), HubSpot's own opt-out of
 * every email; a lifecycle stage is its internal value (`customer`, not "Customer").
 */

export const SEQUENCE_STATUS_PROPERTY = 'cadenza_sequence_status';
export const LAST_ACTIVITY_PROPERTY = 'cadenza_last_activity_at';

/** The properties a change read asks for. */
export const CONTACT_PROPERTIES = [
  'email',
  'firstname',
  'lastname',
  'company',
  'jobtitle',
  'phone',
  'hubspot_owner_id',
  'lifecyclestage',
  'hs_email_optout',
  'lastmodifieddate',
  'hs_updated_by_user_id',
  SEQUENCE_STATUS_PROPERTY,
  LAST_ACTIVITY_PROPERTY,
] as const;

/**
 * The properties Cadenza may write, by field. The address (the join key), the owner (an owner id,
 * not an address) and the opt-out (HubSpot sets it from subscription changes) are not written.
 */
export const WRITABLE: Readonly<Record<string, string>> = {
  firstName: 'firstname',
  lastName: 'lastname',
  company: 'company',
  title: 'jobtitle',
  phone: 'phone',
  lifecycleStage: 'lifecyclestage',
  cadenzaSequenceStatus: SEQUENCE_STATUS_PROPERTY,
  cadenzaLastActivityAt: LAST_ACTIVITY_PROPERTY,
};

export interface HubSpotObject {
  id: string;
  properties: Record<string, string | null | undefined>;
  archived?: boolean;
}

const text = (v: string | null | undefined): string | null => (v === undefined || v === null || v === '' ? null : v);

/** The modify date as epoch milliseconds (HubSpot answers ISO 8601; some accounts' older records epoch ms). */
export function modifiedAt(o: HubSpotObject, property: string): number {
  const v = o.properties[property];
  const n = v && /^\d+$/.test(v) ? Number(v) : Date.parse(v ?? '');
  if (!Number.isFinite(n)) throw new Error(`HubSpot record ${o.id} has no ${property}`);
  return n;
}

export function toCrmContact(o: HubSpotObject, ownerEmail: (ownerId: string) => string | null): CrmContact {
  const p = o.properties;
  const owner = text(p.hubspot_owner_id);
  return {
    crmId: o.id,
    email: text(p.email)?.toLowerCase() ?? null,
    firstName: text(p.firstname),
    lastName: text(p.lastname),
    company: text(p.company),
    title: text(p.jobtitle),
    phone: text(p.phone),
    ownerEmail: owner ? ownerEmail(owner) : null,
    lifecycleStage: text(p.lifecyclestage),
    doNotContact: p.hs_email_optout === 'true',
    updatedAt: new Date(modifiedAt(o, 'lastmodifieddate')).toISOString(),
    updatedBy: text(p.hs_updated_by_user_id),
    ...(o.archived ? { deleted: true } : {}),
    cadenzaSequenceStatus: text(p[SEQUENCE_STATUS_PROPERTY]),
    cadenzaLastActivityAt: text(p[LAST_ACTIVITY_PROPERTY]),
  };
}

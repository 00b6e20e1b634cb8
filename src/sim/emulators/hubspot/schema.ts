/**
 * What a new HubSpot account knows before anyone adds to it: the object types the emulator serves,
 * their default properties (the ones HubSpot documents on each object's guide, with their types and
 * the options of the enumerations), the default property group of each, and the association type
 * ids from an engagement to a contact.
 *
 * Sources: developers.hubspot.com/docs/api/crm/{contacts,notes,emails,calls,tasks} (properties
 * tables, "Associations" sections) and /docs/api/crm/properties (types and field types). This file
 * is kept apart from the connector's own constants (src/crm/hubspot/) on purpose: two independent
 * readings of the docs, so that a wrong id in one is caught by the other.
 */

export const objectTypes = ['contacts', 'deals', 'notes', 'emails', 'calls', 'tasks'] as const;
export type ObjectType = (typeof objectTypes)[number];
export type EngagementType = Exclude<ObjectType, 'contacts' | 'deals'>;

export function isObjectType(s: string): s is ObjectType {
  return (objectTypes as readonly string[]).includes(s);
}

/** Property data types (`type`) the emulator checks values of; the Properties API documents more. */
export type PropertyType = 'string' | 'number' | 'datetime' | 'date' | 'enumeration' | 'bool';

export interface PropertyDef {
  name: string;
  label: string;
  type: PropertyType;
  fieldType: string;
  groupName: string;
  /** Enumerations: the allowed internal values. */
  options?: readonly string[];
  /** Set by HubSpot only (ids, create and modify dates): writing one is refused. */
  readOnly?: boolean;
  /** Created through the Properties API (HubSpot's `hubspotDefined: false`). */
  custom?: boolean;
  hasUniqueValue?: boolean;
  description?: string;
  createdAt?: string;
}

/**
 * Each object's default property group. contactinformation is the contacts' documented group; the
 * engagement objects' group names are unverified (the connector creates its own group, so nothing
 * depends on them).
 */
export const defaultGroup: Record<ObjectType, string> = {
  contacts: 'contactinformation',
  deals: 'dealinformation',
  notes: 'noteinformation',
  emails: 'emailinformation',
  calls: 'callinformation',
  tasks: 'taskinformation',
};

/**
 * The association type id from each engagement to a contact (HUBSPOT_DEFINED), as the engagement
 * guides list them: note 202, email 198, call 194, task 204. Any other id or target is refused.
 */
export const engagementToContact: Record<EngagementType, number> = { notes: 202, emails: 198, calls: 194, tasks: 204 };

/** Deal to contact (HUBSPOT_DEFINED), as the associations guide lists it: 3 (contact to deal is 4). */
export const dealToContact = 3;

/** The properties HubSpot itself sets on every record: its id and the create and modify dates. */
export const systemProperties: Record<ObjectType, { created: string; modified: string }> = {
  contacts: { created: 'createdate', modified: 'lastmodifieddate' },
  deals: { created: 'createdate', modified: 'hs_lastmodifieddate' },
  notes: { created: 'hs_createdate', modified: 'hs_lastmodifieddate' },
  emails: { created: 'hs_createdate', modified: 'hs_lastmodifieddate' },
  calls: { created: 'hs_createdate', modified: 'hs_lastmodifieddate' },
  tasks: { created: 'hs_createdate', modified: 'hs_lastmodifieddate' },
};

/** Properties a search returns when it names none (the search guide's defaults per object). */
export const defaultSearchProperties: Record<ObjectType, readonly string[]> = {
  contacts: ['createdate', 'email', 'firstname', 'hs_object_id', 'lastmodifieddate', 'lastname'],
  deals: ['amount', 'closedate', 'createdate', 'dealname', 'dealstage', 'hs_lastmodifieddate', 'hs_object_id', 'pipeline'],
  notes: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  emails: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  calls: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  tasks: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
};

/** Documented as "Required" on create for every engagement: where it sits on the timeline. */
export const requiredOnCreate: Record<ObjectType, readonly string[]> = {
  contacts: [],
  // The deals guide: dealname, dealstage and (with more than one pipeline) pipeline are required.
  deals: ['dealname', 'dealstage'],
  notes: ['hs_timestamp'],
  emails: ['hs_timestamp'],
  calls: ['hs_timestamp'],
  tasks: ['hs_timestamp'],
};

type Spec = [name: string, type: PropertyType, options?: readonly string[]];

const text = (name: string): Spec => [name, 'string'];

const common: Spec[] = [['hs_timestamp', 'datetime'], text('hubspot_owner_id'), text('hs_attachment_ids')];

const specs: Record<ObjectType, Spec[]> = {
  contacts: [
    ...['email', 'firstname', 'lastname', 'phone', 'company', 'jobtitle', 'website', 'hubspot_owner_id'].map(text),
    ['lifecyclestage', 'enumeration', ['subscriber', 'lead', 'marketingqualifiedlead', 'salesqualifiedlead', 'opportunity', 'customer', 'evangelist', 'other']],
    // "Unsubscribed from all email": what the CRM sync reads as do-not-contact.
    ['hs_email_optout', 'bool'],
  ],
  // Stages are the account's pipelines' (the default pipeline's ids, or any an admin made): any string.
  deals: [text('dealname'), text('dealstage'), text('pipeline'), ['amount', 'number'], ['closedate', 'datetime'], text('hubspot_owner_id')],
  notes: [...common, text('hs_note_body')],
  emails: [
    ...common,
    ['hs_email_direction', 'enumeration', ['EMAIL', 'INCOMING_EMAIL', 'FORWARDED_EMAIL']],
    ['hs_email_status', 'enumeration', ['BOUNCED', 'FAILED', 'SCHEDULED', 'SENDING', 'SENT']],
    text('hs_email_subject'),
    text('hs_email_text'),
    text('hs_email_html'),
    text('hs_email_headers'),
  ],
  calls: [
    ...common,
    text('hs_call_title'),
    text('hs_call_body'),
    text('hs_call_callee_object_id'),
    text('hs_call_callee_object_type'),
    ['hs_call_direction', 'enumeration', ['INBOUND', 'OUTBOUND']],
    // An outcome's GUID; accounts may define their own outcomes, so any string is taken (unverified).
    text('hs_call_disposition'),
    // Milliseconds.
    ['hs_call_duration', 'number'],
    text('hs_call_from_number'),
    text('hs_call_to_number'),
    text('hs_call_recording_url'),
    text('hs_call_source'),
    text('hs_activity_type'),
    [
      'hs_call_status',
      'enumeration',
      ['BUSY', 'CALLING_CRM_USER', 'CANCELED', 'COMPLETED', 'CONNECTING', 'FAILED', 'IN_PROGRESS', 'MISSED', 'NO_ANSWER', 'QUEUED', 'RINGING'],
    ],
  ],
  tasks: [
    ...common,
    text('hs_task_subject'),
    text('hs_task_body'),
    ['hs_task_status', 'enumeration', ['NOT_STARTED', 'IN_PROGRESS', 'WAITING', 'COMPLETED', 'DEFERRED']],
    ['hs_task_priority', 'enumeration', ['LOW', 'MEDIUM', 'HIGH']],
    // EMAIL, CALL and TODO are documented; the rest of the list is unverified.
    ['hs_task_type', 'enumeration', ['EMAIL', 'CALL', 'TODO', 'LINKED_IN']],
    text('hs_task_reminders'),
  ],
};

const fieldTypeOf: Record<PropertyType, string> = {
  string: 'text',
  number: 'number',
  datetime: 'date',
  date: 'date',
  enumeration: 'select',
  bool: 'booleancheckbox',
};

/** A fresh copy of `type`'s default properties, the system ones read-only. */
export function defaultProperties(type: ObjectType): Map<string, PropertyDef> {
  const out = new Map<string, PropertyDef>();
  const add = (def: PropertyDef) => out.set(def.name, def);
  for (const [name, t, options] of specs[type]) {
    add({ name, label: name, type: t, fieldType: fieldTypeOf[t], groupName: defaultGroup[type], ...(options ? { options } : {}) });
  }
  const sys = systemProperties[type];
  // hs_updated_by_user_id: the user whose change was the last (documented on every object as
  // "Updated by user ID"; set by HubSpot, here from the token or the test's `by`).
  for (const [name, t] of [[sys.created, 'datetime'], [sys.modified, 'datetime'], ['hs_object_id', 'number'], ['hs_updated_by_user_id', 'number']] as const) {
    add({ name, label: name, type: t, fieldType: fieldTypeOf[t], groupName: defaultGroup[type], readOnly: true });
  }
  return out;
}

/**
 * The documented pairs of `type` and `fieldType` (Properties API guide; enforced on v3 since
 * February 2021): a property created with any other pair is refused.
 */
export const fieldTypesOf: Record<string, readonly string[]> = {
  bool: ['booleancheckbox'],
  enumeration: ['booleancheckbox', 'checkbox', 'radio', 'select', 'calculation_equation'],
  date: ['date'],
  datetime: ['date'],
  string: ['file', 'text', 'textarea', 'calculation_equation', 'html', 'phonenumber'],
  number: ['number', 'calculation_equation'],
};

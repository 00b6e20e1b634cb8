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

export const objectTypes = ['contacts', 'notes', 'emails', 'calls', 'tasks'] as const;
export type ObjectType = (typeof objectTypes)[number];
export type EngagementType = Exclude<ObjectType, 'contacts'>;

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

/** The properties HubSpot itself sets on every record: its id and the create and modify dates. */
export const systemProperties: Record<ObjectType, { created: string; modified: string }> = {
  contacts: { created: 'createdate', modified: 'lastmodifieddate' },
  notes: { created: 'hs_createdate', modified: 'hs_lastmodifieddate' },
  emails: { created: 'hs_createdate', modified: 'hs_lastmodifieddate' },
  calls: { created: 'hs_createdate', modified: 'hs_lastmodifieddate' },
  tasks: { created: 'hs_createdate', modified: 'hs_lastmodifieddate' },
};

/** Properties a search returns when it names none (the search guide's defaults per object). */
export const defaultSearchProperties: Record<ObjectType, readonly string[]> = {
  contacts: ['createdate', 'email', 'firstname', 'hs_object_id', 'lastmodifieddate', 'lastname'],
  notes: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  emails: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  calls: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
  tasks: ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'],
};

/** Documented as "Required" on create for every engagement: where it sits on the timeline. */
export const requiredOnCreate: Record<ObjectType, readonly string[]> = {
  contacts: [],
  notes: ['hs_timestamp'],
  emails: ['hs_timestamp'],
  calls: ['hs_timestamp'],
  tasks: ['hs_timestamp'],
};

type Spec = [name: string, type: PropertyType, options?: readonly string[]];

const text = (name: string): Spec => [name, 'string'];

const common: Spec[] = [['hs_timestamp', 'datetime'], text('hubspot_owner_id'), text('hs_attachment_ids')];

const specs: Record<ObjectType, Spec[]> = {
  contacts: ['email', 'firstname', 'lastname', 'phone', 'company', 'jobtitle', 'website', 'hubspot_owner_id'].map(text),
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
  for (const [name, t] of [[sys.created, 'datetime'], [sys.modified, 'datetime'], ['hs_object_id', 'number']] as const) {
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

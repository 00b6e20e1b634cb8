/**
 * The sObjects the emulator serves and the fields of each that the CRM connector reads or writes,
 * with the properties the object reference (developer.salesforce.com, "Object Reference for the
 * Salesforce Platform") gives them: type, length, Create / Update, picklist values. A field not
 * listed here does not exist for the emulator (a query naming it is INVALID_FIELD, a write naming
 * it a 400), so a connector that relies on a field the real object lacks fails here first.
 *
 * Custom fields (`__c`) exist only once a test adds them, as an admin would in Setup
 * (emulator.addCustomField).
 */

export type FieldType = 'id' | 'string' | 'email' | 'phone' | 'textarea' | 'url' | 'picklist' | 'boolean' | 'int' | 'date' | 'datetime' | 'reference';

export interface FieldDef {
  name: string;
  type: FieldType;
  length?: number;
  createable: boolean;
  updateable: boolean;
  nillable: boolean;
  /** Restricted picklists refuse anything else (INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST). */
  picklistValues?: readonly string[];
  defaultValue?: string | boolean | null;
  /** reference: the objects an id may point to; the first names the relationship's type in queries. */
  referenceTo?: readonly string[];
  /** reference: the name a query path uses (`Owner.Email`). */
  relationshipName?: string;
  externalId?: boolean;
  unique?: boolean;
  custom?: boolean;
}

export type SObjectName = 'User' | 'Account' | 'Contact' | 'Lead' | 'Task' | 'Opportunity' | 'OpportunityContactRole';
export const sobjectNames: readonly SObjectName[] = ['User', 'Account', 'Contact', 'Lead', 'Task', 'Opportunity', 'OpportunityContactRole'];
export const isSObjectName = (s: string): s is SObjectName => (sobjectNames as readonly string[]).includes(s);

/** The 3-character key prefix of each object's ids (documented: 005 User, 001 Account, 003 Contact, 00Q Lead, 00T Task, 006 Opportunity, 00K OpportunityContactRole). */
export const keyPrefix: Record<SObjectName, string> = { User: '005', Account: '001', Contact: '003', Lead: '00Q', Task: '00T', Opportunity: '006', OpportunityContactRole: '00K' };

const sys = (name: string, type: FieldType, extra: Partial<FieldDef> = {}): FieldDef => ({ name, type, createable: false, updateable: false, nillable: false, ...extra });
const rw = (name: string, type: FieldType, extra: Partial<FieldDef> = {}): FieldDef => ({ name, type, createable: true, updateable: true, nillable: true, ...extra });
/** A lookup to a user; a writable one (OwnerId) left out of a create defaults to the acting user (defaultValue null marks "the platform fills it"). */
const userRef = (name: string, relationshipName: string, writable = false): FieldDef => ({
  name,
  type: 'reference',
  length: 18,
  referenceTo: ['User'],
  relationshipName,
  createable: writable,
  updateable: writable,
  nillable: false,
  ...(writable ? { defaultValue: null } : {}),
});

/** What every object carries: its id, audit fields and SystemModstamp (set by the platform, never writable). */
const audit: FieldDef[] = [
  sys('Id', 'id', { length: 18 }),
  sys('IsDeleted', 'boolean'),
  sys('CreatedDate', 'datetime'),
  userRef('CreatedById', 'CreatedBy'),
  sys('LastModifiedDate', 'datetime'),
  userRef('LastModifiedById', 'LastModifiedBy'),
  sys('SystemModstamp', 'datetime'),
];

const standard: Record<SObjectName, FieldDef[]> = {
  User: [sys('Id', 'id', { length: 18 }), sys('Username', 'string', { length: 80 }), sys('Email', 'email', { length: 128 }), sys('Name', 'string', { length: 121 }), sys('Alias', 'string', { length: 8 }), sys('SystemModstamp', 'datetime')],
  Account: [...audit, rw('Name', 'string', { length: 255, nillable: false }), userRef('OwnerId', 'Owner', true)],
  Contact: [
    ...audit,
    rw('FirstName', 'string', { length: 40 }),
    rw('LastName', 'string', { length: 80, nillable: false }),
    rw('Email', 'email', { length: 80 }),
    rw('Title', 'string', { length: 128 }),
    rw('Phone', 'phone', { length: 40 }),
    rw('AccountId', 'reference', { length: 18, referenceTo: ['Account'], relationshipName: 'Account' }),
    userRef('OwnerId', 'Owner', true),
    rw('HasOptedOutOfEmail', 'boolean', { nillable: false, defaultValue: false }),
  ],
  Lead: [
    ...audit,
    rw('FirstName', 'string', { length: 40 }),
    rw('LastName', 'string', { length: 80, nillable: false }),
    rw('Company', 'string', { length: 255, nillable: false }),
    rw('Email', 'email', { length: 80 }),
    rw('Title', 'string', { length: 128 }),
    rw('Phone', 'phone', { length: 40 }),
    rw('Status', 'picklist', { length: 40, picklistValues: ['Open - Not Contacted', 'Working - Contacted', 'Closed - Converted', 'Closed - Not Converted'], defaultValue: 'Open - Not Contacted' }),
    sys('IsConverted', 'boolean', { defaultValue: false }),
    userRef('OwnerId', 'Owner', true),
    rw('HasOptedOutOfEmail', 'boolean', { nillable: false, defaultValue: false }),
  ],
  Task: [
    ...audit,
    rw('Subject', 'string', { length: 255 }),
    rw('Description', 'textarea', { length: 32_000 }),
    rw('ActivityDate', 'date'),
    rw('Status', 'picklist', { length: 40, nillable: false, picklistValues: ['Not Started', 'In Progress', 'Completed', 'Waiting on someone else', 'Deferred'], defaultValue: 'Not Started' }),
    rw('Priority', 'picklist', { length: 40, nillable: false, picklistValues: ['High', 'Normal', 'Low'], defaultValue: 'Normal' }),
    rw('WhoId', 'reference', { length: 18, referenceTo: ['Contact', 'Lead'], relationshipName: 'Who' }),
    // Create but not Update (object reference: "Create, Filter, Group, Nillable, Restricted picklist, Sort").
    { ...rw('TaskSubtype', 'picklist', { length: 40, picklistValues: ['Task', 'Email', 'ListEmail', 'Cadence', 'Call', 'LinkedIn'] }), updateable: false },
    rw('CallDurationInSeconds', 'int'),
    rw('CallType', 'picklist', { length: 40, picklistValues: ['Internal', 'Inbound', 'Outbound'] }),
    rw('CallDisposition', 'string', { length: 255 }),
    userRef('OwnerId', 'Owner', true),
  ],
  Opportunity: [
    ...audit,
    rw('Name', 'string', { length: 120, nillable: false }),
    rw('StageName', 'picklist', { length: 255, nillable: false, picklistValues: ['Prospecting', 'Qualification', 'Needs Analysis', 'Proposal/Price Quote', 'Negotiation/Review', 'Closed Won', 'Closed Lost'] }),
    rw('CloseDate', 'date', { nillable: false }),
    rw('AccountId', 'reference', { length: 18, referenceTo: ['Account'], relationshipName: 'Account' }),
    userRef('OwnerId', 'Owner', true),
  ],
  OpportunityContactRole: [
    ...audit,
    rw('OpportunityId', 'reference', { length: 18, referenceTo: ['Opportunity'], relationshipName: 'Opportunity', nillable: false }),
    rw('ContactId', 'reference', { length: 18, referenceTo: ['Contact'], relationshipName: 'Contact', nillable: false }),
    rw('Role', 'picklist', { length: 40, picklistValues: ['Decision Maker', 'Economic Buyer', 'Evaluator', 'Influencer', 'Other'] }),
    rw('IsPrimary', 'boolean', { nillable: false, defaultValue: false }),
  ],
};

/** The fields of each object: the standard ones above and the custom ones a test added. */
export class Schema {
  private readonly custom = new Map<SObjectName, FieldDef[]>();

  fields(object: SObjectName): FieldDef[] {
    return [...standard[object], ...(this.custom.get(object) ?? [])];
  }

  /** Field names compare without regard to case, as in SOQL and DML. */
  field(object: SObjectName, name: string): FieldDef | undefined {
    const n = name.toLowerCase();
    return this.fields(object).find((f) => f.name.toLowerCase() === n);
  }

  /** The relationship `name` (e.g. `Owner`) of `object`, and the object it leads to. */
  relationship(object: SObjectName, name: string): { field: FieldDef; target: SObjectName } | undefined {
    const n = name.toLowerCase();
    const field = this.fields(object).find((f) => f.relationshipName?.toLowerCase() === n);
    // A polymorphic lookup (WhoId → Contact or Lead) is queried through TYPEOF, which the emulator does not serve.
    if (!field || field.referenceTo?.length !== 1) return undefined;
    return { field, target: field.referenceTo[0] as SObjectName };
  }

  addCustom(object: SObjectName, def: Omit<FieldDef, 'custom' | 'createable' | 'updateable' | 'nillable'> & Partial<FieldDef>): FieldDef {
    if (!def.name.endsWith('__c')) throw new Error(`addCustomField: a custom field's API name ends in __c, got ${def.name}`);
    if (this.field(object, def.name)) throw new Error(`addCustomField: ${object}.${def.name} exists`);
    const full: FieldDef = { createable: true, updateable: true, nillable: true, ...def, custom: true };
    this.custom.set(object, [...(this.custom.get(object) ?? []), full]);
    return full;
  }
}

/**
 * The part of Twenty's data model the emulator serves: the standard objects people, companies,
 * workspaceMembers, opportunities, notes, tasks, noteTargets and taskTargets with the fields (a
 * subset) their workspace entities declare (twenty-server
 * modules/<object>/standard-objects/*.workspace-entity.ts), and the custom
 * fields a client adds through the metadata API. Every workspace has its own generated API, so the
 * REST paths are the objects' plural names (`/rest/notes`) and record keys are the field names.
 *
 * A field's type decides what a create may put in it and what a filter may compare; composite
 * types (EMAILS, FULL_NAME, RICH_TEXT_V2, ACTOR, PHONES, CURRENCY) are JSON objects with fixed sub-fields and are
 * filtered by `field.subField`.
 */
export type FieldType =
  | 'UUID'
  | 'TEXT'
  | 'NUMBER'
  | 'BOOLEAN'
  | 'DATE_TIME'
  | 'POSITION'
  | 'SELECT'
  | 'EMAILS'
  | 'FULL_NAME'
  | 'RICH_TEXT_V2'
  | 'ACTOR'
  | 'PHONES'
  | 'CURRENCY'
  /** A many-to-one relation's join column (`noteId`, `personId`): a UUID of a record of `target`. */
  | 'RELATION_ID';

export interface FieldDef {
  name: string;
  type: FieldType;
  /** Set by the server (id, createdAt, …): a create may not give it, except `id` and `position`. */
  system?: boolean;
  options?: readonly string[];
  /** RELATION_ID: the plural name of the object it points at. */
  target?: string;
  isCustom?: boolean;
  label?: string;
  /** Metadata id (GET /rest/metadata/objects lists it; a view filter names its field by it). */
  id?: string;
  createdAt?: string;
}

export interface ObjectDef {
  /** Metadata id (GET /rest/metadata/objects). */
  id: string;
  nameSingular: string;
  namePlural: string;
  labelSingular: string;
  labelPlural: string;
  isSystem: boolean;
  fields: Map<string, FieldDef>;
}

export const compositeSubFields: Partial<Record<FieldType, readonly string[]>> = {
  EMAILS: ['primaryEmail', 'additionalEmails'],
  FULL_NAME: ['firstName', 'lastName'],
  RICH_TEXT_V2: ['blocknote', 'markdown'],
  ACTOR: ['source', 'workspaceMemberId', 'name', 'context'],
  PHONES: ['primaryPhoneNumber', 'primaryPhoneCountryCode', 'primaryPhoneCallingCode', 'additionalPhones'],
  CURRENCY: ['amountMicros', 'currencyCode'],
};

const base: FieldDef[] = [
  { name: 'id', type: 'UUID', system: true },
  { name: 'createdAt', type: 'DATE_TIME', system: true },
  { name: 'updatedAt', type: 'DATE_TIME', system: true },
  { name: 'deletedAt', type: 'DATE_TIME', system: true },
  { name: 'position', type: 'POSITION', system: true },
  { name: 'createdBy', type: 'ACTOR' },
  { name: 'updatedBy', type: 'ACTOR', system: true },
];

/** Task status options as Twenty seeds them (task.workspace-entity: TODO, IN_PROGRESS, DONE). */
export const taskStatuses = ['TODO', 'IN_PROGRESS', 'DONE'] as const;

/**
 * Opportunity stages as Twenty seeds them (opportunity.workspace-entity: NEW, SCREENING, MEETING,
 * PROPOSAL, CUSTOMER), with their labels. A workspace may edit the options; here they are fixed.
 */
export const opportunityStages = [
  { value: 'NEW', label: 'New' },
  { value: 'SCREENING', label: 'Screening' },
  { value: 'MEETING', label: 'Meeting' },
  { value: 'PROPOSAL', label: 'Proposal' },
  { value: 'CUSTOMER', label: 'Customer' },
] as const;

function object(id: string, singular: string, plural: string, label: [string, string], fields: FieldDef[], isSystem = false): ObjectDef {
  return {
    id,
    nameSingular: singular,
    namePlural: plural,
    labelSingular: label[0],
    labelPlural: label[1],
    isSystem,
    // Standard fields get stable metadata ids derived from the object's, so that a view filter can
    // name one (Twenty's are random UUIDs).
    fields: new Map([...base, ...fields].map((f, i) => [f.name, { ...f, id: `${id.slice(0, 9)}${id.slice(-4)}-4000-8000-${String(i + 1).padStart(12, '0')}` }])),
  };
}

/** A new copy per emulator: custom fields are added to these maps. */
export function standardObjects(): ObjectDef[] {
  const targets = (owner: 'note' | 'task'): FieldDef[] => [
    { name: `${owner}Id`, type: 'RELATION_ID', target: `${owner}s` },
    { name: 'personId', type: 'RELATION_ID', target: 'people' },
    // Twenty's targets also point at companies and opportunities; those objects are not served
    // here, so a target naming one is refused as an unknown field (a loud gap).
  ];
  return [
    object('20202020-0000-4000-8000-00000000e001', 'person', 'people', ['Person', 'People'], [
      { name: 'name', type: 'FULL_NAME' },
      { name: 'emails', type: 'EMAILS' },
      { name: 'jobTitle', type: 'TEXT' },
      { name: 'city', type: 'TEXT' },
      { name: 'phones', type: 'PHONES' },
      // person.workspace-entity: a person belongs to one company; it has no owner of its own (the
      // company's accountOwner is the nearest).
      { name: 'companyId', type: 'RELATION_ID', target: 'companies' },
    ]),
    object('20202020-0000-4000-8000-00000000e002', 'note', 'notes', ['Note', 'Notes'], [
      { name: 'title', type: 'TEXT' },
      { name: 'bodyV2', type: 'RICH_TEXT_V2' },
    ]),
    object('20202020-0000-4000-8000-00000000e003', 'task', 'tasks', ['Task', 'Tasks'], [
      { name: 'title', type: 'TEXT' },
      { name: 'bodyV2', type: 'RICH_TEXT_V2' },
      { name: 'dueAt', type: 'DATE_TIME' },
      { name: 'status', type: 'SELECT', options: taskStatuses },
      // assigneeId points at a workspace member; none exist here, so only null is accepted.
      { name: 'assigneeId', type: 'RELATION_ID', target: 'workspaceMembers' },
    ]),
    object('20202020-0000-4000-8000-00000000e006', 'company', 'companies', ['Company', 'Companies'], [
      { name: 'name', type: 'TEXT' },
      // company.workspace-entity: accountOwner, a workspace member.
      { name: 'accountOwnerId', type: 'RELATION_ID', target: 'workspaceMembers' },
    ]),
    // Workspace members are the workspace's users: Twenty creates them when a user joins; a client
    // only reads them (the emulator does not refuse a create, which Twenty's permissions may).
    object('20202020-0000-4000-8000-00000000e007', 'workspaceMember', 'workspaceMembers', ['Workspace Member', 'Workspace Members'], [
      { name: 'name', type: 'FULL_NAME' },
      { name: 'userEmail', type: 'TEXT' },
      { name: 'userId', type: 'UUID' },
    ], true),
    object('20202020-0000-4000-8000-00000000e008', 'opportunity', 'opportunities', ['Opportunity', 'Opportunities'], [
      { name: 'name', type: 'TEXT' },
      { name: 'amount', type: 'CURRENCY' },
      { name: 'closeDate', type: 'DATE_TIME' },
      { name: 'stage', type: 'SELECT', options: opportunityStages.map((o) => o.value) },
      { name: 'pointOfContactId', type: 'RELATION_ID', target: 'people' },
      { name: 'companyId', type: 'RELATION_ID', target: 'companies' },
      { name: 'ownerId', type: 'RELATION_ID', target: 'workspaceMembers' },
    ]),
    object('20202020-0000-4000-8000-00000000e004', 'noteTarget', 'noteTargets', ['Note Target', 'Note Targets'], targets('note'), true),
    object('20202020-0000-4000-8000-00000000e005', 'taskTarget', 'taskTargets', ['Task Target', 'Task Targets'], targets('task'), true),
  ];
}

/** Standard objects of Twenty this emulator does not serve: asked for, they are a loud gap, not "not found". */
export const unservedStandardObjects = new Set([
  'attachments',
  'favorites',
  'timelineActivities',
  'messages',
  'calendarEvents',
  'workflows',
]);

/** The field types the metadata API may create here (a custom field of another type is a loud gap). */
export const creatableFieldTypes = new Set<FieldType>(['TEXT', 'NUMBER', 'BOOLEAN', 'DATE_TIME']);

/**
 * The part of Twenty's data model the emulator serves: the standard objects people, notes, tasks,
 * noteTargets and taskTargets with the fields their workspace entities declare
 * (twenty-server modules/{person,note,task}/standard-objects/*.workspace-entity.ts), and the custom
 * fields a client adds through the metadata API. Every workspace has its own generated API, so the
 * REST paths are the objects' plural names (`/rest/notes`) and record keys are the field names.
 *
 * A field's type decides what a create may put in it and what a filter may compare; composite
 * types (EMAILS, FULL_NAME, RICH_TEXT_V2, ACTOR) are JSON objects with fixed sub-fields and are
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
  /** Metadata id, for the fields created through the metadata API. */
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

function object(id: string, singular: string, plural: string, label: [string, string], fields: FieldDef[], isSystem = false): ObjectDef {
  return {
    id,
    nameSingular: singular,
    namePlural: plural,
    labelSingular: label[0],
    labelPlural: label[1],
    isSystem,
    fields: new Map([...base, ...fields].map((f) => [f.name, f])),
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
    object('20202020-0000-4000-8000-00000000e004', 'noteTarget', 'noteTargets', ['Note Target', 'Note Targets'], targets('note'), true),
    object('20202020-0000-4000-8000-00000000e005', 'taskTarget', 'taskTargets', ['Task Target', 'Task Targets'], targets('task'), true),
  ];
}

/** Standard objects of Twenty this emulator does not serve: asked for, they are a loud gap, not "not found". */
export const unservedStandardObjects = new Set([
  'companies',
  'opportunities',
  'workspaceMembers',
  'attachments',
  'favorites',
  'timelineActivities',
  'messages',
  'calendarEvents',
  'workflows',
]);

/** The field types the metadata API may create here (a custom field of another type is a loud gap). */
export const creatableFieldTypes = new Set<FieldType>(['TEXT', 'NUMBER', 'BOOLEAN', 'DATE_TIME']);

import { externalIdField } from './activity-records.ts';
import { TwentyRefusal, type TwentyClient } from './client.ts';
import { ownedPersonFields } from './fields.ts';
import { objectsMetadata } from './metadata.ts';

/**
 * Creates the custom fields Cadenza writes, through Twenty's metadata REST API
 * (POST /rest/metadata/fields {objectMetadataId, type, name, label, description}; the objects' ids
 * come from GET /rest/metadata/objects):
 *
 *   note.cadenzaActivityId, task.cadenzaActivityId   TEXT       the activity's externalId
 *   person.cadenzaSequenceStatus                     TEXT       Cadenza-owned (fields.ts)
 *   person.cadenzaLastActivityAt                     DATE_TIME  Cadenza-owned
 *
 * A field that is already there is fine: Twenty refuses the second create ("Field already
 * exists"; the GraphQL API calls the same a conflict, so a 409 is taken as well). Safe to run again.
 */
const wanted: Array<{ object: string; name: string; type: 'TEXT' | 'DATE_TIME'; label: string; description: string }> = [
  ...['note', 'task'].map((object) => ({
    object,
    name: externalIdField,
    type: 'TEXT' as const,
    label: 'Cadenza activity ID',
    description: 'Written by Cadenza: the activity this record stands for, so that Cadenza never writes it twice.',
  })),
  ...ownedPersonFields.map((f) => ({ object: 'person', ...f })),
];

export async function ensureCustomFields(client: TwentyClient): Promise<void> {
  const objects = await objectsMetadata(client);
  for (const f of wanted) {
    const obj = objects.get(f.object);
    if (obj.fields.some((x) => x.name === f.name)) continue;
    try {
      await client.request('POST', '/rest/metadata/fields', {}, { objectMetadataId: obj.id, type: f.type, name: f.name, label: f.label, description: f.description });
    } catch (e) {
      if (e instanceof TwentyRefusal && (e.status === 409 || /already exists/i.test(e.message))) continue;
      throw e;
    }
  }
}

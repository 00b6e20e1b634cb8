import { externalIdField } from './activity-records.ts';
import { TwentyRefusal, firstDataValue, type TwentyClient } from './client.ts';

/**
 * Creates the custom TEXT field `cadenzaActivityId` on notes and on tasks through Twenty's metadata
 * REST API (POST /rest/metadata/fields {objectMetadataId, type, name, label}; the objects' ids come
 * from GET /rest/metadata/objects). A field that is already there is fine: Twenty refuses the
 * second create ("Field already exists"; the GraphQL API calls the same a conflict, so a 409 is
 * taken as well). Safe to run again.
 */
export async function ensureExternalIdField(client: TwentyClient): Promise<void> {
  const listed = firstDataValue(await client.request('GET', '/rest/metadata/objects'));
  // The legacy answer is {data: {objects: [...]}}; the newer one (behind a feature flag) {data: [...]}.
  const objects = (Array.isArray(listed) ? listed : []) as Array<{ id?: unknown; nameSingular?: unknown }>;
  for (const name of ['note', 'task']) {
    const obj = objects.find((o) => o.nameSingular === name);
    if (typeof obj?.id !== 'string') throw new Error(`Twenty: the workspace has no '${name}' object in /rest/metadata/objects`);
    try {
      await client.request('POST', '/rest/metadata/fields', {}, {
        objectMetadataId: obj.id,
        type: 'TEXT',
        name: externalIdField,
        label: 'Cadenza activity ID',
        description: 'Written by Cadenza: the activity this record stands for, so that Cadenza never writes it twice.',
      });
    } catch (e) {
      if (e instanceof TwentyRefusal && (e.status === 409 || /already exists/i.test(e.message))) continue;
      throw e;
    }
  }
}

import { firstDataValue, type TwentyClient } from './client.ts';

/**
 * The workspace's objects as GET /rest/metadata/objects lists them: each object's id and its
 * fields' ids, names and types (a view filter names its field by id; a custom field is created on
 * an object by its id). The legacy answer is {data: {objects: [...]}}, the newer one (behind a
 * feature flag) {data: [...]}; both are read.
 */
export interface ObjectInfo {
  id: string;
  nameSingular: string;
  fields: Array<{ id: string; name: string; type: string; options: Array<{ value: string; label: string }> }>;
}

export interface Objects {
  /** The object by its singular name; throws when the workspace has none. */
  get(nameSingular: string): ObjectInfo;
}

export async function objectsMetadata(client: TwentyClient): Promise<Objects> {
  const listed = firstDataValue(await client.request('GET', '/rest/metadata/objects'));
  const objects = (Array.isArray(listed) ? listed : []) as Array<Record<string, unknown>>;
  return {
    get(name) {
      const o = objects.find((x) => x.nameSingular === name);
      if (typeof o?.id !== 'string') throw new Error(`Twenty: the workspace has no '${name}' object in /rest/metadata/objects`);
      const fields = (Array.isArray(o.fields) ? o.fields : []) as Array<Record<string, unknown>>;
      return {
        id: o.id,
        nameSingular: name,
        fields: fields
          .filter((f) => typeof f.id === 'string' && typeof f.name === 'string')
          .map((f) => ({ id: f.id as string, name: f.name as string, type: String(f.type), options: optionsOf(f.options) })),
      };
    },
  };
}

/** A SELECT field's options ({value, label}); none for other fields. */
function optionsOf(v: unknown): Array<{ value: string; label: string }> {
  if (!Array.isArray(v)) return [];
  return (v as Array<Record<string, unknown>>)
    .filter((o) => typeof o?.value === 'string')
    .map((o) => ({ value: o.value as string, label: typeof o.label === 'string' ? o.label : (o.value as string) }));
}

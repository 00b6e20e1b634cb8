import { PipedriveRefusal, type PipedriveClient } from './client.ts';

/**
 * Cadenza's person custom fields (docs/crm.md "Field ownership"): prepare() creates them through
 * POST /v1/personFields; writeContactFields() writes them with PATCH /api/v2/persons/{id}
 * {custom_fields: {<key>: value}}. A custom field is addressed by its key, a 40-character hash
 * Pipedrive makes, so the keys are looked up by name each time (GET /v1/personFields).
 *
 * Pipedrive does not refuse a second field with the same name: it makes another. So prepare()
 * looks before it creates, and when two share a name (two prepares racing) the oldest (lowest id)
 * is the one used, by every caller alike.
 */
export const cadenzaPersonFields: Readonly<Record<string, { name: string; field_type: 'varchar' }>> = {
  cadenzaSequenceStatus: { name: 'Cadenza sequence status', field_type: 'varchar' },
  // An instant (ISO 8601): a 'date' field would drop the time of day.
  cadenzaLastActivityAt: { name: 'Cadenza last activity', field_type: 'varchar' },
};

interface PersonField {
  id: number;
  key: string;
  name: string;
}

export async function listPersonFields(client: PipedriveClient): Promise<PersonField[]> {
  const out: PersonField[] = [];
  let start = 0;
  // v1 paging: start/limit and additional_data.pagination; a company has tens of fields, not thousands.
  for (let i = 0; i < 10; i++) {
    const body = await client.get('/v1/personFields', start === 0 ? {} : { start });
    out.push(...((body?.data ?? []) as PersonField[]));
    const p = body?.additional_data?.pagination;
    if (!p?.more_items_in_collection) return out;
    start = Number(p.next_start);
  }
  return out;
}

export async function ensurePersonFields(client: PipedriveClient): Promise<void> {
  const existing = new Set((await listPersonFields(client)).map((f) => f.name));
  for (const f of Object.values(cadenzaPersonFields)) {
    if (existing.has(f.name)) continue;
    try {
      await client.post('/v1/personFields', { name: f.name, field_type: f.field_type });
    } catch (e) {
      if (e instanceof PipedriveRefusal) throw new Error(`Pipedrive refused the person field '${f.name}': ${e.message}`);
      throw e;
    }
  }
}

/**
 * Cadenza's field name → the person field key to write: Cadenza's own fields by their names, any
 * other by a custom field of that exact name or key (a field the admin gave to Cadenza).
 */
export function fieldKeys(fields: readonly PersonField[], names: Iterable<string>): Map<string, string> {
  const byName = new Map<string, PersonField>();
  for (const f of [...fields].sort((a, b) => a.id - b.id)) if (!byName.has(f.name)) byName.set(f.name, f);
  const out = new Map<string, string>();
  for (const name of names) {
    const wanted = cadenzaPersonFields[name]?.name ?? name;
    const f = byName.get(wanted) ?? fields.find((x) => x.key === name);
    if (!f) throw new Error(`Pipedrive has no person field for '${name}' (prepare() creates Cadenza's own; others must exist)`);
    out.set(name, f.key);
  }
  return out;
}

import type { FastifyInstance } from 'fastify';
import type { TwentyRouteContext } from '../context.ts';
import { twentyErrors } from '../errors.ts';
import { opportunityStages, type FieldDef, type ObjectDef } from '../schema.ts';

/**
 * Twenty's metadata REST API (docs.twenty.com: "/rest/metadata/ … create, modify or delete objects
 * and fields"), the part a client needs to add a custom field:
 *
 *   GET  /rest/metadata/objects   → 200 {data: {objects: [...]}, pageInfo, totalCount}; each
 *                                 object with its `fields` ({id, name, type, label, isCustom,
 *                                 options}), as Twenty's metadata answers nest them (that the
 *                                 REST answer nests them too is unverified)
 *   POST /rest/metadata/fields    {objectMetadataId, type, name, label, description?, icon?}
 *                                 → 201 {data: {createOneField: {...}}}; a name the object
 *                                 already has → 400
 *
 * These are the "legacy" answer shapes (data.objects, data.createOneField); Twenty's integration
 * test (rest/suites/field-metadata.integration-spec.ts) also knows a newer one behind a feature
 * flag, with the array or the field directly in `data`. Route names: 'metadata.objects.list',
 * 'metadata.fields.create'.
 */
export function registerMetadataRoutes(app: FastifyInstance, ctx: TwentyRouteContext): void {
  app.get('/rest/metadata/objects', (req, reply) =>
    ctx.run('metadata.objects.list', req, reply, () => {
      const objects = [...ctx.store.objects.values()].map(objectShape);
      return {
        status: 200,
        body: {
          data: { objects },
          totalCount: objects.length,
          pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: objects[0]?.id ?? null, endCursor: objects.at(-1)?.id ?? null },
        },
      };
    }),
  );

  app.post('/rest/metadata/fields', (req, reply) =>
    ctx.run('metadata.fields.create', req, reply, () => {
      const b = req.body;
      if (typeof b !== 'object' || b === null || Array.isArray(b) || Buffer.isBuffer(b)) return twentyErrors.badRequest('Body must be an object');
      const input = b as Record<string, unknown>;
      const r = ctx.store.addField(input);
      if (!r.ok) return twentyErrors.badRequest(r.message);
      return { status: 201, body: { data: { createOneField: fieldShape(r.field, r.object, input) } } };
    }),
  );
}

function objectShape(o: ObjectDef) {
  return {
    id: o.id,
    nameSingular: o.nameSingular,
    namePlural: o.namePlural,
    labelSingular: o.labelSingular,
    labelPlural: o.labelPlural,
    description: null,
    icon: null,
    isCustom: false,
    isActive: true,
    isSystem: o.isSystem,
    fields: [...o.fields.values()].map((f) => ({
      id: f.id,
      name: f.name,
      type: f.type === 'RELATION_ID' ? 'UUID' : f.type,
      label: f.label ?? f.name,
      isCustom: f.isCustom ?? false,
      isSystem: f.system ?? false,
      // SELECT options as Twenty lists them ({value, label}); the labels here are the values,
      // except the opportunity stages, whose seeded labels schema.ts keeps.
      options: f.options ? f.options.map((value, position) => ({ value, label: optionLabel(o, value), position })) : null,
    })),
  };
}

function optionLabel(o: ObjectDef, value: string): string {
  return o.nameSingular === 'opportunity' ? (opportunityStages.find((s) => s.value === value)?.label ?? value) : value;
}

function fieldShape(f: FieldDef, o: ObjectDef, input: Record<string, unknown>) {
  return {
    id: f.id,
    type: f.type,
    name: f.name,
    label: f.label,
    description: typeof input.description === 'string' ? input.description : null,
    icon: typeof input.icon === 'string' ? input.icon : null,
    isCustom: true,
    isActive: true,
    isSystem: false,
    isNullable: true,
    objectMetadataId: o.id,
    createdAt: f.createdAt,
    updatedAt: f.createdAt,
    defaultValue: null,
    options: null,
  };
}

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { forType, jsonBody, type HubSpotRouteContext, type ObjectTypeParams } from '../context.ts';
import { hubspotErrors } from '../errors.ts';
import type { EmulatorReply } from '../../server.ts';
import { fieldTypesOf, type ObjectType } from '../schema.ts';
import { shapeError } from '../validate.ts';

/**
 * The Properties API (/crm/v3/properties/{objectType}): create a custom property, create a
 * property group. A property created here can then be written and searched on that object type;
 * one that exists already is a 409. Route names for faults: `properties.create`,
 * `properties.createGroup`.
 */

const propertySchema = z
  .object({
    name: z.string().min(1),
    label: z.string().min(1),
    type: z.enum(['string', 'number', 'date', 'datetime', 'enumeration', 'bool']),
    fieldType: z.string().min(1),
    groupName: z.string().min(1),
    description: z.string().optional(),
    hasUniqueValue: z.boolean().optional(),
    hidden: z.boolean().optional(),
    displayOrder: z.number().int().optional(),
    formField: z.boolean().optional(),
    options: z
      .array(z.object({ label: z.string(), value: z.string(), description: z.string().optional(), displayOrder: z.number().int().optional(), hidden: z.boolean().optional() }).strict())
      .optional(),
    calculationFormula: z.string().optional(),
    externalOptions: z.boolean().optional(),
    dataSensitivity: z.enum(['non_sensitive', 'sensitive', 'highly_sensitive']).optional(),
  })
  .strict();

const groupSchema = z.object({ name: z.string().min(1), label: z.string().min(1), displayOrder: z.number().int().optional() }).strict();

/** Internal names: lower case letters, digits and underscores, starting with a letter (unverified beyond "lowercase"). */
const internalName = /^[a-z][a-z0-9_]{0,99}$/;

export function registerPropertyRoutes(app: FastifyInstance, ctx: HubSpotRouteContext): void {
  /** A POST on `path` for an object type, its JSON body checked against `schema` before `fn`. */
  const post = <S extends z.ZodType>(path: string, route: string, schema: S, fn: (type: ObjectType, body: z.infer<S>) => EmulatorReply) =>
    app.post<ObjectTypeParams>(path, (req, reply) =>
      ctx.run(route, req, reply, () =>
        forType(req.params.objectType, (type) => {
          const parsed = schema.safeParse(jsonBody(req));
          return parsed.success ? fn(type, parsed.data) : shapeError(parsed.error);
        }),
      ),
    );

  post('/crm/v3/properties/:objectType', 'properties.create', propertySchema, (type, p) => {
    if (!internalName.test(p.name)) return hubspotErrors.validation(`Invalid property name: ${p.name}`);
    if (!fieldTypesOf[p.type]!.includes(p.fieldType)) return hubspotErrors.validation(`fieldType ${p.fieldType} is not valid for type ${p.type}`);
    if (!ctx.store.groups.get(type)!.has(p.groupName)) return hubspotErrors.validation(`Property group ${p.groupName} does not exist`);
    if (ctx.store.property(type, p.name)) return hubspotErrors.alreadyExists('Property', p.name);
    const createdAt = new Date(ctx.store.clock.now()).toISOString();
    const options = p.options?.map((o) => o.value);
    ctx.store.properties.get(type)!.set(p.name, {
      name: p.name,
      label: p.label,
      type: p.type,
      fieldType: p.fieldType,
      groupName: p.groupName,
      custom: true,
      hasUniqueValue: p.hasUniqueValue ?? false,
      description: p.description ?? '',
      createdAt,
      ...(options ? { options } : {}),
    });
    return {
      status: 201,
      body: {
        name: p.name,
        label: p.label,
        type: p.type,
        fieldType: p.fieldType,
        description: p.description ?? '',
        groupName: p.groupName,
        options: p.options ?? [],
        displayOrder: p.displayOrder ?? -1,
        calculated: false,
        externalOptions: p.externalOptions ?? false,
        hasUniqueValue: p.hasUniqueValue ?? false,
        hidden: p.hidden ?? false,
        hubspotDefined: false,
        formField: p.formField ?? false,
        modificationMetadata: { archivable: true, readOnlyDefinition: false, readOnlyValue: false },
        createdAt,
        updatedAt: createdAt,
        archived: false,
      },
    };
  });

  post('/crm/v3/properties/:objectType/groups', 'properties.createGroup', groupSchema, (type, g) => {
    if (!internalName.test(g.name)) return hubspotErrors.validation(`Invalid property group name: ${g.name}`);
    const groups = ctx.store.groups.get(type)!;
    if (groups.has(g.name)) return hubspotErrors.alreadyExists('Property group', g.name);
    const group = { name: g.name, label: g.label, displayOrder: g.displayOrder ?? -1 };
    groups.set(g.name, group);
    return { status: 201, body: { ...group, archived: false } };
  });
}

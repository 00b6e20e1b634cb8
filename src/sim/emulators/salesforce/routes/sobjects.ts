import type { FastifyInstance } from 'fastify';
import type { EmulatorReply } from '../../server.ts';
import { forObject, jsonBody, type SalesforceRouteContext, type VersionParams } from '../context.ts';
import { sfError, sfErrors, type SfError } from '../errors.ts';
import { checkRecord } from '../record-input.ts';
import { keyPrefix, type FieldDef, type SObjectName } from '../schema.ts';
import type { SalesforceStore, SRecord } from '../store.ts';

/**
 * sObject resources (REST API Developer Guide):
 *
 *   GET   /sobjects/{object}/describe                          fields and their properties
 *   PATCH /sobjects/{object}/{id}                              update one record → 204
 *   PATCH /composite/sobjects/{object}/{externalIdField}       upsert up to 200 records by an
 *         external id ("Upsert Records Using sObject Collections", v46.0+): 200 with one
 *         UpsertResult per record, in order ({id, success, errors, created})
 *
 * Route names for faults: `sobjects.describe`, `sobjects.update`, `composite.upsert`.
 */
type ObjectParams = { Params: VersionParams & { object: string } };

/** Documented: at most 200 records per sObject Collections request. */
export const maxCollection = 200;

export function registerSObjectRoutes(app: FastifyInstance, ctx: SalesforceRouteContext): void {
  app.get<ObjectParams>('/services/data/:version/sobjects/:object/describe', (req, reply) =>
    ctx.run('sobjects.describe', req, reply, () => forObject(req.params.version, req.params.object, (o, base) => ({ status: 200, body: describe(ctx.store, o, base) }))),
  );

  app.patch<{ Params: VersionParams & { object: string; id: string } }>('/services/data/:version/sobjects/:object/:id', (req, reply) =>
    ctx.run('sobjects.update', req, reply, (userId) =>
      forObject(req.params.version, req.params.object, (o) => {
        const rec = ctx.store.get(o, req.params.id);
        if (!rec) return sfErrors.notFound();
        if (rec.IsDeleted === true) return sfError(404, 'ENTITY_IS_DELETED', 'entity is deleted');
        const body = jsonBody(req);
        if (!body || Array.isArray(body)) return sfErrors.jsonParser('Cannot deserialize instance of sObject from a body that is not a JSON object');
        const { attributes: _ignored, ...fields } = body as Record<string, unknown>;
        const checked = checkRecord(ctx.store, o, fields, 'update');
        if ('whole' in checked) return checked.whole;
        const errors = checked.errors.length ? checked.errors : validationErrors(ctx.store, o, { ...rec, ...checked.values });
        if (errors.length) return { status: 400, body: errors };
        ctx.store.update(o, rec.Id, checked.values, userId);
        return { status: 204 };
      }),
    ),
  );

  app.patch<{ Params: VersionParams & { object: string; field: string } }>('/services/data/:version/composite/sobjects/:object/:field', (req, reply) =>
    ctx.run('composite.upsert', req, reply, (userId) => forObject(req.params.version, req.params.object, (o) => upsert(ctx.store, o, req.params.field, jsonBody(req), userId))),
  );
}

function upsert(store: SalesforceStore, object: SObjectName, fieldName: string, body: unknown, userId: string): EmulatorReply {
  const ext = store.schema.field(object, fieldName);
  if (!ext || !(ext.externalId || ext.name === 'Id')) return sfErrors.notExternalId(fieldName);
  // Documented: "Only external ids are supported. Don't use record ids."
  if (ext.name === 'Id') return sfErrors.notExternalId(fieldName);
  if (!body || typeof body !== 'object' || Array.isArray(body)) return sfErrors.jsonParser('Cannot deserialize instance of the collection request from a body that is not a JSON object');
  const unknownKey = Object.keys(body).find((k) => k !== 'allOrNone' && k !== 'records');
  if (unknownKey) return sfErrors.jsonParser(`Unrecognized field "${unknownKey}" (not marked as ignorable)`);
  const { allOrNone = false, records } = body as { allOrNone?: unknown; records?: unknown };
  if (typeof allOrNone !== 'boolean') return sfErrors.jsonParser('Cannot deserialize instance of boolean for allOrNone');
  if (!Array.isArray(records)) return sfErrors.jsonParser('records: a list of sObjects is required');
  if (records.length > maxCollection) return sfErrors.tooManyRecords();

  // Each record must say its type in attributes, and only the URL's type is allowed (documented).
  type Plan = { errors: SfError[]; values: Record<string, unknown>; existing?: SRecord; key?: string };
  const plans: Plan[] = [];
  for (const r of records) {
    if (!r || typeof r !== 'object' || Array.isArray(r)) return sfErrors.jsonParser('Cannot deserialize instance of sObject');
    const { attributes, ...fields } = r as Record<string, unknown>;
    const type = (attributes as { type?: unknown } | undefined)?.type;
    if (typeof type !== 'string') return sfError(400, 'INVALID_TYPE', 'Must send a concrete entity type.');
    if (type.toLowerCase() !== object.toLowerCase()) return sfError(400, 'INVALID_TYPE', `The list can contain objects only of the type indicated in the request URI: ${type}`);
    const keyEntry = Object.entries(fields).find(([k]) => k.toLowerCase() === ext.name.toLowerCase());
    const key = typeof keyEntry?.[1] === 'string' && keyEntry[1] !== '' ? keyEntry[1] : undefined;
    if (key === undefined) {
      // The key's JSON type is still checked as the rest of the record's is.
      const checked = checkRecord(store, object, fields, 'create');
      if ('whole' in checked) return checked.whole;
      plans.push({ errors: [{ errorCode: 'MISSING_ARGUMENT', message: `${ext.name} not specified`, fields: [] }], values: {} });
      continue;
    }
    // External ids compare without regard to case unless the field is "case sensitive" (default: not).
    const existing = store.withValue(object, ext.name, key).find((x) => x.IsDeleted !== true);
    const { [keyEntry![0]]: _key, ...rest } = fields;
    const checked = checkRecord(store, object, existing ? rest : fields, existing ? 'update' : 'create');
    if ('whole' in checked) return checked.whole;
    const ruleErrors = checked.errors.length ? [] : validationErrors(store, object, { ...(existing ?? {}), ...checked.values });
    plans.push({ errors: [...checked.errors, ...ruleErrors], values: checked.values, existing, key: key.toLowerCase() });
  }
  // The same external id twice in one request: both refused (text unverified).
  const counts = new Map<string, number>();
  for (const p of plans) if (p.key) counts.set(p.key, (counts.get(p.key) ?? 0) + 1);
  for (const p of plans) {
    if (p.key && counts.get(p.key)! > 1) p.errors.push({ errorCode: 'DUPLICATE_VALUE', message: `Duplicate external id specified: ${p.key}`, fields: [ext.name] });
  }

  const failed = plans.some((p) => p.errors.length);
  const results = plans.map((p) => {
    if (p.errors.length) return { success: false, errors: p.errors.map(({ errorCode, message, fields }) => ({ statusCode: errorCode, message, fields: fields ?? [] })) };
    if (allOrNone && failed) {
      return {
        success: false,
        errors: [{ statusCode: 'ALL_OR_NONE_OPERATION_ROLLED_BACK', message: 'Record rolled back because not all records were valid and the request was using AllOrNone header', fields: [] }],
      };
    }
    if (p.existing) {
      store.update(object, p.existing.Id, p.values, userId);
      return { id: p.existing.Id, success: true, errors: [], created: false };
    }
    const rec = store.create(object, p.values, userId);
    return { id: rec.Id, success: true, errors: [], created: true };
  });
  return { status: 200, body: results };
}

/** An admin's validation rules (Setup → Validation Rules): FIELD_CUSTOM_VALIDATION_EXCEPTION with the rule's message. */
function validationErrors(store: SalesforceStore, object: SObjectName, record: Record<string, unknown>): SfError[] {
  return store.validationRules
    .filter((r) => r.object === object)
    .map((r) => r.check(record))
    .filter((m): m is string => m !== null)
    .map((message) => ({ errorCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', message, fields: [] }));
}

/** DescribeSObjectResult, the parts a client reads (name, keyPrefix, fields with their properties). */
function describe(store: SalesforceStore, object: SObjectName, base: string): Record<string, unknown> {
  return {
    name: object,
    label: object,
    keyPrefix: keyPrefix[object],
    custom: false,
    createable: object !== 'User',
    updateable: object !== 'User',
    queryable: true,
    fields: store.schema.fields(object).map(describeField),
    urls: { sobject: `${base}/sobjects/${object}`, describe: `${base}/sobjects/${object}/describe`, rowTemplate: `${base}/sobjects/${object}/{ID}` },
  };
}

function describeField(f: FieldDef): Record<string, unknown> {
  return {
    name: f.name,
    label: f.name,
    type: f.type,
    length: f.length ?? 0,
    createable: f.createable,
    updateable: f.updateable,
    nillable: f.nillable,
    custom: f.custom === true,
    externalId: f.externalId === true,
    unique: f.unique === true,
    filterable: !(f.type === 'textarea' && (f.length ?? 0) > 255),
    picklistValues: (f.picklistValues ?? []).map((v) => ({ value: v, label: v, active: true, defaultValue: v === f.defaultValue })),
    referenceTo: f.referenceTo ?? [],
    relationshipName: f.relationshipName ?? null,
  };
}

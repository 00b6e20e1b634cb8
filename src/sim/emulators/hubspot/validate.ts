import { z } from 'zod';
import type { EmulatorReply } from '../server.ts';
import { hubspotErrors, type PropertyProblem } from './errors.ts';
import { dealToContact, engagementToContact, requiredOnCreate, type ObjectType } from './schema.ts';
import type { CrmAssociation, HubSpotStore } from './store.ts';

/**
 * What a create may write, checked as HubSpot checks it: the input's shape (unknown fields are a
 * 400, as HubSpot's JSON reader refuses them), every property known to the object and its value of
 * the property's type, the required ones present, and each association pointing at an existing
 * contact with the documented type id. The answers are HubSpot's VALIDATION_ERROR bodies.
 */

const value = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const createInputSchema = z
  .object({
    properties: z.record(z.string(), value),
    associations: z
      .array(
        z
          .object({
            to: z.object({ id: z.union([z.string().min(1), z.number()]) }).strict(),
            types: z
              .array(
                z
                  .object({
                    associationCategory: z.enum(['HUBSPOT_DEFINED', 'USER_DEFINED', 'INTEGRATOR_DEFINED']),
                    associationTypeId: z.number().int(),
                  })
                  .strict(),
              )
              .min(1),
          })
          .strict(),
      )
      .optional(),
    /** Documented for batch create: with one on every input, refusals are per input (207). */
    objectWriteTraceId: z.string().min(1).optional(),
  })
  .strict();
export type CreateInput = z.infer<typeof createInputSchema>;

/** Zod's complaint in the words of HubSpot's JSON reader (text unverified). */
export function shapeError(error: z.ZodError, at: ReadonlyArray<string | number> = []): EmulatorReply {
  const issue = error.issues[0]!;
  const where = [...at, ...issue.path.map(String)].join('.');
  return hubspotErrors.validation(`Invalid input JSON: ${where === '' ? '' : `${where}: `}${issue.message}`);
}

export type Checked = { ok: true; properties: Record<string, string>; associations: CrmAssociation[] } | { ok: false; reply: EmulatorReply };

/** HubSpot's limit on a single-line text value (65,536 characters, as the notes guide states for hs_note_body). */
const maxTextLength = 65_536;

/** `partial`: an update, where the properties required on create may be left out. */
export function checkCreate(store: HubSpotStore, type: ObjectType, input: CreateInput, o: { partial?: boolean } = {}): Checked {
  const properties: Record<string, string> = {};
  const problems: PropertyProblem[] = [];
  for (const [name, raw] of Object.entries(input.properties)) {
    if (raw === null) continue;
    const v = String(raw);
    const problem = checkValue(store, type, name, v);
    if (problem) problems.push(problem);
    else properties[name] = v;
  }
  if (problems.length > 0) return { ok: false, reply: hubspotErrors.propertyValues(problems) };
  const missing = o.partial ? [] : requiredOnCreate[type].filter((n) => properties[n] === undefined || properties[n] === '');
  if (missing.length > 0) return { ok: false, reply: hubspotErrors.requiredMissing(type.slice(0, -1).toUpperCase(), missing) };
  const associations: CrmAssociation[] = [];
  for (const a of input.associations ?? []) {
    const toId = String(a.to.id);
    for (const t of a.types) {
      // Only engagement-to-contact and deal-to-contact are emulated; every other pairing is a loud gap, never a silent yes.
      const expected = type === 'contacts' ? undefined : type === 'deals' ? dealToContact : engagementToContact[type];
      if (t.associationCategory !== 'HUBSPOT_DEFINED' || t.associationTypeId !== expected) {
        return { ok: false, reply: hubspotErrors.validation(`Invalid association type: ${t.associationCategory} ${t.associationTypeId} from ${type} (emulator: only ${type} to contacts, HUBSPOT_DEFINED ${expected ?? 'none'})`) };
      }
      // The target must exist; HubSpot's text for a missing one is unverified.
      if (!store.get('contacts', toId)) return { ok: false, reply: hubspotErrors.validation(`No contacts with ID ${toId} exist`) };
      associations.push({ toObjectType: 'contacts', toId, associationCategory: t.associationCategory, associationTypeId: t.associationTypeId });
    }
  }
  return { ok: true, properties, associations };
}

function checkValue(store: HubSpotStore, type: ObjectType, name: string, v: string): PropertyProblem | null {
  const def = store.property(type, name);
  if (!def) return { name, error: 'PROPERTY_DOESNT_EXIST', message: `Property "${name}" does not exist` };
  if (def.readOnly) return { name, error: 'READ_ONLY_VALUE', message: `${name} is a read only property; its value cannot be set.` };
  switch (def.type) {
    case 'enumeration':
      return def.options && !def.options.includes(v) ? { name, error: 'INVALID_OPTION', message: `${v} was not one of the allowed options: [${def.options.join(', ')}]` } : null;
    case 'number':
      return v.trim() === '' || !Number.isFinite(Number(v)) ? { name, error: 'INVALID_INTEGER', message: `${v} is not a valid number` } : null;
    case 'datetime':
    case 'date':
      // Documented: epoch milliseconds or an ISO 8601 (UTC) date-time.
      return /^\d{1,15}$/.test(v) || !Number.isNaN(Date.parse(v)) ? null : { name, error: 'INVALID_DATE', message: `${v} is not a valid date` };
    default:
      return v.length > maxTextLength ? { name, error: 'INVALID_LENGTH', message: `${name} is longer than ${maxTextLength} characters` } : null;
  }
}

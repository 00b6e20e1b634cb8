import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { jsonBody, type HubSpotRouteContext } from '../context.ts';
import { hubspotErrors } from '../errors.ts';
import { isObjectType } from '../schema.ts';
import { shapeError } from '../validate.ts';

/**
 * The associations API (v4): POST /crm/v4/associations/{fromObjectType}/{toObjectType}/batch/read
 * with `{inputs: [{id}]}` → `{results: [{from: {id}, to: [{toObjectId, associationTypes}]}]}`. The
 * emulator keeps associations from a record to contacts (what creates carry), so `toObjectType`
 * must be contacts. Route name for faults: `associations.batchRead`.
 */
const readSchema = z.object({ inputs: z.array(z.object({ id: z.union([z.string().min(1), z.number()]) }).strict()) }).strict();

export function registerAssociationRoutes(app: FastifyInstance, ctx: HubSpotRouteContext): void {
  app.post<{ Params: { from: string; to: string } }>('/crm/v4/associations/:from/:to/batch/read', (req, reply) =>
    ctx.run('associations.batchRead', req, reply, () => {
      const { from, to } = req.params;
      if (!isObjectType(from)) return hubspotErrors.unknownObjectType(from);
      if (to !== 'contacts') return hubspotErrors.validation(`emulator: associations to ${to} are not implemented (only to contacts)`);
      const parsed = readSchema.safeParse(jsonBody(req));
      if (!parsed.success) return shapeError(parsed.error);
      if (parsed.data.inputs.length > 1000) return hubspotErrors.tooManyInputs(parsed.data.inputs.length, 1000);
      const results = parsed.data.inputs.flatMap((i) => {
        const r = ctx.store.get(from, String(i.id));
        if (!r) return [];
        const byTarget = new Map<string, Array<{ category: string; typeId: number; label: null }>>();
        for (const a of r.associations) {
          if (!byTarget.has(a.toId)) byTarget.set(a.toId, []);
          byTarget.get(a.toId)!.push({ category: a.associationCategory, typeId: a.associationTypeId, label: null });
        }
        return [{ from: { id: r.id }, to: [...byTarget].map(([toId, types]) => ({ toObjectId: Number(toId), associationTypes: types })) }];
      });
      return { status: 200, body: { status: 'COMPLETE', results } };
    }),
  );
}

/**
 * Lead imports as jobs (src/leads/import-job.ts): the file is the request body, read as it
 * arrives; progress, the recent imports, cancelling, and the rejects report as CSV.
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { cancelImportJob, createImportJob, failStaleJobs, rejectsReport, runImportJob, type ImportJobSpec } from '../../leads/index.ts';
import { findImportJob, recentImportJobs, type ImportJobRow } from '../../leads/sql/import-jobs.ts';
import type { ApiContext } from '../context.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';
import { phonesFlaggedFields } from './leads.ts';

/** 100 MB: a 200k-row export with a dozen columns is 30–60 MB. The JSON import route stays under 1 MB bodies. */
export const MAX_IMPORT_BYTES = 100 * 1024 * 1024;

const importJob = z
  .object({
    id: z.uuid(),
    status: z.enum(['running', 'done', 'failed', 'cancelled']),
    fileName: z.string().nullable(),
    onDuplicate: z.enum(['skip', 'update']),
    encoding: z.string().nullable().describe("As read: utf-8, windows-1252, utf-16le or utf-16be (null until the header is read)"),
    totalBytes: z.number().int().nullable().describe('The upload size when the client sent Content-Length'),
    bytesRead: z.number().int(),
    percent: z.number().nullable().describe('bytesRead / totalBytes, 0–100; 100 once done'),
    rowsRead: z.number().int().describe('Rows whose fate is settled: inserted + updated + unchanged + rejected'),
    inserted: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int().describe("onDuplicate 'update': rows matching a lead that already had those values"),
    rejected: z.number().int(),
    warnings: z.number().int().describe('Rows imported with a value dropped'),
    warningsByReason: z.record(z.string(), z.number().int()).describe('invalid_time_zone: imported without its time zone (src/leads/reasons.ts)'),
    rejectsByReason: z.record(z.string(), z.number().int()),
    ...phonesFlaggedFields,
    rowsPerSecond: z.number().nullable(),
    enrollSequenceId: z.uuid().nullable().describe('The sequence the inserted and updated leads are enrolled in, batch by batch; null when none was chosen'),
    enrolled: z.number().int().describe('Leads enrolled in enrollSequenceId so far'),
    enrollSkipped: z.number().int().describe('Leads written but not enrolled: see enrollSkippedByReason'),
    enrollSkippedByReason: z.record(z.string(), z.number().int()).describe('already_enrolled, suppressed, cannot_plan, sequence_not_active (paused meanwhile), invalid_address, held_for_review…'),
    hygiene: z
      .object({ valid: z.number().int(), risky: z.number().int(), invalid: z.number().int() })
      .describe('The inserted and updated leads by list-hygiene verdict (docs/deliverability.md): invalid are not enrolled, risky wait in the review queue'),
    error: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .meta({ id: 'LeadImport' });

function toJob(r: ImportJobRow): z.output<typeof importJob> {
  const total = r.total_bytes === null ? null : Number(r.total_bytes);
  const read = Number(r.bytes_read);
  const end = r.finished_at ?? r.updated_at;
  const seconds = (new Date(end).getTime() - new Date(r.created_at).getTime()) / 1000;
  return {
    id: r.id,
    status: r.status,
    fileName: r.file_name,
    onDuplicate: r.on_duplicate,
    encoding: r.encoding,
    totalBytes: total,
    bytesRead: read,
    percent: r.status === 'done' ? 100 : total ? Math.min(100, Math.round((read / total) * 1000) / 10) : null,
    rowsRead: r.rows_read,
    inserted: r.inserted,
    updated: r.updated,
    unchanged: r.unchanged,
    rejected: r.rejected,
    warnings: r.warnings,
    warningsByReason: r.warnings_by_reason,
    rejectsByReason: r.rejects_by_reason,
    phonesFlagged: r.phones_flagged,
    phonesFlaggedByReason: r.phones_flagged_by_reason,
    rowsPerSecond: seconds > 0 ? Math.round(r.rows_read / seconds) : null,
    enrollSequenceId: r.enroll_sequence_id,
    enrolled: r.enrolled,
    enrollSkipped: r.enroll_skipped,
    enrollSkippedByReason: r.enroll_skipped_by_reason,
    hygiene: { valid: r.hygiene_valid, risky: r.hygiene_risky, invalid: r.hygiene_invalid },
    error: r.error,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
    finishedAt: r.finished_at ? new Date(r.finished_at).toISOString() : null,
  };
}

async function readJob(ctx: ApiContext, workspaceId: string, importId: string): Promise<z.output<typeof importJob>> {
  const r = await findImportJob(ctx.store.db, workspaceId, importId);
  if (!r) throw cadenzaError('NOT_FOUND', 'no such import');
  return toJob(r);
}

/** The mapping travels in the query string (the body is the file), as JSON. */
const mappingParam = z
  .string()
  .max(32_768)
  .transform((s, c) => {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      c.addIssue({ code: 'custom', message: 'mapping must be JSON: {"CSV column": "email" | "first_name" | … | "custom.<name>" | "-"}' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string(), z.string()));

const importParams = workspaceParams({ importId: z.uuid() });

export const leadImportRoutes = [
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/leads/imports',
    summary: 'Import leads from a CSV file sent as the request body (text/csv, up to 100 MB); answers when the import has ended. Poll GET …/leads/imports/{importId} meanwhile',
    tags: ['leads'],
    access: { workspace: 'member' },
    status: 201,
    params: workspaceParams({}),
    query: z.object({
      mapping: mappingParam.optional().describe("JSON object: CSV column → email, first_name, last_name, company, title, phone, country, region, time_zone, custom.<name>, or '-' to leave out; unnamed columns are matched by header"),
      onDuplicate: z.enum(['skip', 'update']).default('skip').describe("An email already in the workspace: reject the row ('skip') or fill the lead's fields from it"),
      encoding: z.enum(['auto', 'utf-8', 'windows-1252']).default('auto').describe('A byte-order mark wins; auto reads UTF-8 unless the first 64 KB are not UTF-8, then Windows-1252 (Excel "CSV")'),
      fileName: z.string().max(255).optional(),
      importId: z.uuid().optional().describe("The job's id, chosen by the client so it can poll progress while the upload runs; one is made otherwise"),
      enrollSequenceId: z.uuid().optional().describe('Then enroll the leads each batch inserts or updates (not rejected or unchanged rows) in this active sequence, with the enroll route\'s checks (suppression, once per sequence); 404 or 409 before reading when it is not an active sequence of the workspace'),
    }),
    rawBody: { contentType: 'text/csv', maxBytes: MAX_IMPORT_BYTES, description: 'The CSV file, streamed: a header line naming the columns, then one lead per row' },
    example: () => ({ query: { onDuplicate: 'skip' as const } }),
    response: importJob,
    handler: async ({ ctx, ws, query, body, req }) => {
      const declared = Number(req.headers['content-length']);
      const spec: ImportJobSpec = {
        workspaceId: ws.workspaceId,
        createdBy: ws.userId,
        ...(query.importId ? { id: query.importId } : {}),
        fileName: query.fileName ?? null,
        mapping: query.mapping ?? {},
        onDuplicate: query.onDuplicate,
        encoding: query.encoding,
        totalBytes: Number.isFinite(declared) && declared > 0 ? declared : null,
        enrollSequenceId: query.enrollSequenceId ?? null,
      };
      const deps = { store: ctx.store, clock: ctx.clock, random: ctx.random, ...(ctx.workDue ? { workDue: ctx.workDue } : {}), ...(ctx.hygiene ? { hygiene: ctx.hygiene } : {}), ...(ctx.erasure ? { erasure: ctx.erasure } : {}) };
      const jobId = await createImportJob(deps, spec);
      try {
        await runImportJob(deps, jobId, spec, body as AsyncIterable<Buffer>);
      } catch (e) {
        // The job row tells the same story; the id lets a script find it.
        if (e instanceof Error && 'details' in e && typeof e.details === 'object' && e.details) Object.assign(e.details, { importId: jobId });
        throw e;
      }
      return readJob(ctx, ws.workspaceId, jobId);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/leads/imports',
    summary: "The workspace's 20 most recent lead imports, newest first, running ones included",
    tags: ['leads'],
    access: { workspace: 'member' },
    params: workspaceParams({}),
    response: z.object({ imports: z.array(importJob) }),
    handler: async ({ ctx, ws }) => {
      await failStaleJobs(ctx, ws.workspaceId);
      const rows = await recentImportJobs(ctx.store.db, ws.workspaceId, 20);
      return { imports: rows.map(toJob) };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/leads/imports/:importId',
    summary: "A lead import's status and counts, committed after each batch of 1,000 rows",
    tags: ['leads'],
    access: { workspace: 'member' },
    params: importParams,
    response: importJob,
    handler: async ({ ctx, ws, params }) => {
      await failStaleJobs(ctx, ws.workspaceId);
      return readJob(ctx, ws.workspaceId, params.importId);
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/leads/imports/:importId/cancel',
    summary: 'Cancel a running import: it stops after the batch in hand; the leads written so far stay. 409 once it has ended',
    tags: ['leads'],
    access: { workspace: 'member' },
    params: importParams,
    response: importJob,
    handler: async ({ ctx, ws, params }) => {
      await cancelImportJob(ctx, ws.workspaceId, params.importId);
      return readJob(ctx, ws.workspaceId, params.importId);
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/leads/imports/:importId/rejects.csv',
    summary: "An import's rejected rows as CSV: the file's columns, then line, reason, message and raw (re-importable once corrected)",
    tags: ['leads'],
    access: { workspace: 'member' },
    params: importParams,
    response: z.string().describe('text/csv'),
    handler: async (c) => {
      const { ctx, ws, params, reply } = c;
      const report = await rejectsReport(ctx.store.db, ws.workspaceId, params.importId);
      if (!report) throw cadenzaError('NOT_FOUND', 'no such import');
      await audit(c, { action: 'export.downloaded', target: `import-${params.importId}-rejects.csv`, detail: { importId: params.importId } });
      reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="import-${params.importId}-rejects.csv"`);
      // A stream, sent as is (no serialisation): the report is read from the database a page at a time.
      return Readable.from(report) as unknown as string;
    },
  }),
];

/**
 * A lead import as a job: importLeads (import.ts) reading an upload as it arrives, with a
 * lead_import row (migration 0015) that holds its settings and counts, and lead_import_reject rows
 * for the rejects report. After each batch one transaction stores the batch's rejects and the
 * settled counts, so a client polling the row sees progress, and a crash leaves the counts of what
 * was written. Cancelling is a status change that the running import notices at its next batch.
 *
 * The domain here returns and throws CadenzaErrors; the HTTP routes are src/api/routes/lead-imports.ts.
 */
import type { Clock } from '../common/clock.ts';
import { cadenzaError, isCadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import { enrollInTx } from '../sequence/bulk-enroll.ts';
import type { LeadImportStatus } from '../store/schema.ts';
import type { Db, Store, Tx } from '../store/store.ts';
import type { EncodingChoice } from './csv-source.ts';
import { importLeads, type ImportBatch } from './import.ts';
import type { ErasureKey } from '../common/erasure-key.ts';
import { csvRecord } from '../common/csv-write.ts';
import { rejectRecord } from './reject-file.ts';
import { REJECT_FILE_COLUMNS } from './headers.ts';
import type { HygieneChecker } from './hygiene/checker.ts';

export interface ImportJobSpec {
  workspaceId: string;
  /** The member who starts it; null for an API key. */
  createdBy: string | null;
  /** Chosen by the client so that it can poll the job while its upload is still being sent. */
  id?: string;
  fileName: string | null;
  mapping: Record<string, string>;
  onDuplicate: 'skip' | 'update';
  encoding: EncodingChoice;
  /** The upload's size when known (Content-Length): what progress is measured against. */
  totalBytes: number | null;
  /**
   * An active sequence of the workspace to enroll the leads each batch inserts or updates in (not
   * the rejected or unchanged rows), batch by batch, so the first leads start while the rest are read.
   */
  enrollSequenceId?: string | null;
}

export interface ImportJobDeps {
  store: Store;
  clock: Clock;
  random: Random;
  /** Enrollments were written: wake the scheduler (src/ops/work-nudge.ts), as the enroll route does. */
  workDue?: () => void;
  /** List hygiene: each batch's written leads are checked before they are enrolled; absent: not checked. */
  hygiene?: HygieneChecker;
  /** Rows whose address was erased are refused (import.ts ImportOptions.erasure). */
  erasure?: ErasureKey;
}

/** A running job that made no progress for this long is dead: its process stopped, or its upload stalled. */
export const STALE_AFTER_MS = 10 * 60_000;

/** Rejects per INSERT: 7 parameters a row, well under PostgreSQL's 65,535. */
const REJECT_INSERT_ROWS = 1000;

/** Why a job stopped reading: its row says it is no longer running (cancelled, or marked stale). */
class JobStopped extends Error {
  constructor(readonly status: LeadImportStatus) {
    super(`the import is ${status}`);
  }
}

/** Creates the job's row in 'running'; a client-chosen id already taken (in any workspace) is a CONFLICT. */
export async function createImportJob(deps: ImportJobDeps, spec: ImportJobSpec): Promise<string> {
  const id = spec.id ?? newId(deps.clock.now(), deps.random);
  const now = new Date(deps.clock.now());
  if (spec.enrollSequenceId) {
    // Refused before a byte is read: finding out after 200k rows that nothing was enrolled is worse.
    const seq = await deps.store.db.selectFrom('sequence').select(['status', 'name']).where('workspace_id', '=', spec.workspaceId).where('id', '=', spec.enrollSequenceId).executeTakeFirst();
    if (!seq) throw cadenzaError('NOT_FOUND', 'no such sequence to enroll in', { field: 'enrollSequenceId' });
    if (seq.status !== 'active') throw cadenzaError('CONFLICT', `the sequence "${seq.name}" is ${seq.status}: only an active sequence takes enrollments`, { field: 'enrollSequenceId', status: seq.status });
  }
  const r = await deps.store.db
    .insertInto('lead_import')
    .values({
      id,
      workspace_id: spec.workspaceId,
      created_by: spec.createdBy,
      file_name: spec.fileName,
      on_duplicate: spec.onDuplicate,
      mapping: JSON.stringify(spec.mapping),
      encoding_requested: spec.encoding,
      total_bytes: spec.totalBytes,
      enroll_sequence_id: spec.enrollSequenceId ?? null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!r) throw cadenzaError('CONFLICT', `an import with id ${id} already exists`, { importId: id });
  return id;
}

export interface ImportJobOutcome {
  status: LeadImportStatus;
}

/**
 * Runs the import into the job's row. Returns its final status ('done', or 'cancelled' when the
 * row was cancelled meanwhile); an import that fails is marked 'failed' with the reason, and the
 * error is thrown on (INVALID_INPUT for a file that cannot be imported, a database error as is).
 */
export async function runImportJob(deps: ImportJobDeps, jobId: string, spec: ImportJobSpec, input: AsyncIterable<Buffer>): Promise<ImportJobOutcome> {
  const db = deps.store.db;
  const now = () => new Date(deps.clock.now());
  const enroll = { enrolled: 0, skipped: 0, byReason: {} as Record<string, number> };
  const hygiene = { valid: 0, risky: 0, invalid: 0 };
  const onBatch = async (b: ImportBatch) => {
    const s = b.settled;
    let enrolledNow = 0;
    if (deps.hygiene && b.leadIds.length > 0) {
      // Before the batch's transaction, which must not wait on DNS; the verdicts are written here,
      // so the enrollment below skips the invalid leads and holds the risky ones.
      const c = (await deps.hygiene.checkLeads(db, spec.workspaceId, b.leadIds)).counts;
      hygiene.valid += c.valid;
      hygiene.risky += c.risky;
      hygiene.invalid += c.invalid;
    }
    const status = await db.transaction().execute(async (tx) => {
      for (let i = 0; i < b.rejects.length; i += REJECT_INSERT_ROWS) {
        await tx
          .insertInto('lead_import_reject')
          .values(
            b.rejects.slice(i, i + REJECT_INSERT_ROWS).map((r) => ({
              import_id: jobId,
              workspace_id: spec.workspaceId,
              line: r.line,
              reason: r.reason,
              message: noNul(r.message),
              fields: r.fields ? JSON.stringify(r.fields.map(noNul)) : null,
              raw: r.raw === undefined ? null : noNul(r.raw),
            })),
          )
          .execute();
      }
      // Counts are recorded whatever the status, so a cancelled job still tells what it wrote.
      const row = await tx
        .updateTable('lead_import')
        .set({
          rows_read: s.rowsRead,
          inserted: s.imported,
          updated: s.updated,
          unchanged: s.unchanged,
          rejected: s.rejected,
          warnings: s.warnings,
          rejects_by_reason: JSON.stringify(s.rejectsByReason),
          warnings_by_reason: JSON.stringify(s.warningsByReason),
          phones_flagged: s.phonesFlagged,
          phones_flagged_by_reason: JSON.stringify(s.phonesFlaggedByReason),
          hygiene_valid: hygiene.valid,
          hygiene_risky: hygiene.risky,
          hygiene_invalid: hygiene.invalid,
          bytes_read: b.bytesRead,
          updated_at: now(),
        })
        .where('id', '=', jobId)
        .returning('status')
        .executeTakeFirstOrThrow();
      // The update above holds the row: a cancel lands before it (nothing enrolled) or after the commit.
      if (row.status === 'running' && spec.enrollSequenceId && b.leadIds.length > 0) {
        enrolledNow = await enrollBatch(tx, deps, spec, spec.enrollSequenceId, b.leadIds, enroll);
        await tx
          .updateTable('lead_import')
          .set({ enrolled: enroll.enrolled, enroll_skipped: enroll.skipped, enroll_skipped_by_reason: JSON.stringify(enroll.byReason) })
          .where('id', '=', jobId)
          .execute();
      }
      return row.status;
    });
    // The first step is usually due now: the scheduler and dispatcher need not wait for their polls.
    if (enrolledNow > 0) deps.workDue?.();
    if (status !== 'running') throw new JobStopped(status);
    // When the upload is already buffered and the database is PGlite (in this thread), every await
    // of a batch settles as a microtask: without a turn of the event loop here, no other request
    // (the progress polls, a cancel) would be served until the whole import had ended.
    await new Promise<void>((resolve) => setImmediate(resolve));
  };

  try {
    await importLeads(deps.store, {
      workspaceId: spec.workspaceId,
      input: input as unknown as NodeJS.ReadableStream,
      mapping: spec.mapping,
      onDuplicate: spec.onDuplicate,
      encoding: spec.encoding,
      ...(deps.erasure ? { erasure: deps.erasure } : {}),
      clock: deps.clock,
      random: deps.random,
      onHeader: async (h) => {
        await db
          .updateTable('lead_import')
          .set({ headers: JSON.stringify(h.headers), delimiter: h.delimiter, encoding: h.encoding, bom: h.hadBom, updated_at: now() })
          .where('id', '=', jobId)
          .execute();
      },
      onBatch,
    });
  } catch (e) {
    if (e instanceof JobStopped) return { status: e.status };
    // Only a refusal of the file is worth showing as is; other messages may name servers or paths.
    const why = isCadenzaError(e, 'INVALID_INPUT') ? e.message : 'the import stopped on a server error; the rows counted above were written';
    await db
      .updateTable('lead_import')
      .set({ status: 'failed', error: why, finished_at: now(), updated_at: now() })
      .where('id', '=', jobId)
      .where('status', '=', 'running')
      .execute()
      .catch(() => undefined);
    throw e;
  }
  const done = await db
    .updateTable('lead_import')
    .set({ status: 'done', finished_at: now(), updated_at: now() })
    .where('id', '=', jobId)
    .where('status', '=', 'running')
    .returning('status')
    .executeTakeFirst();
  // Cancelled after the last batch: the rows are all written, but the user's word stands.
  return { status: done ? 'done' : (await jobStatus(db, jobId)) };
}

/**
 * Enrolls one batch's leads through the enroll route's own path (enrollInTx: suppression, one
 * enrollment per sequence, the mailbox rotation) and adds its outcome to the job's totals. A
 * sequence paused or deleted mid-import refuses the rest, counted as skipped, rather than failing
 * an import whose leads are written. Returns how many were enrolled.
 */
async function enrollBatch(
  tx: Tx,
  deps: ImportJobDeps,
  spec: ImportJobSpec,
  sequenceId: string,
  leadIds: readonly string[],
  totals: { enrolled: number; skipped: number; byReason: Record<string, number> },
): Promise<number> {
  const skip = (reason: string, n: number) => {
    totals.skipped += n;
    totals.byReason[reason] = (totals.byReason[reason] ?? 0) + n;
  };
  try {
    const r = await enrollInTx(tx, deps, { workspaceId: spec.workspaceId, sequenceId, leadIds: [...leadIds] });
    totals.enrolled += r.enrolled;
    for (const x of r.refused) skip(x.reason, 1);
    return r.enrolled;
  } catch (e) {
    // enrollInTx throws NOT_FOUND from its first read, before writing: the transaction is intact.
    if (!isCadenzaError(e, 'NOT_FOUND')) throw e;
    skip('sequence_not_found', leadIds.length);
    return 0;
  }
}

/**
 * PostgreSQL text and jsonb cannot hold U+0000, which a rejected row may (a binary file, a UTF-16
 * file read as UTF-8): the report shows U+FFFD in its place.
 */
function noNul(s: string): string {
  return s.replace(/\u0000/g, '\ufffd');
}

async function jobStatus(db: Db, jobId: string): Promise<LeadImportStatus> {
  const r = await db.selectFrom('lead_import').select('status').where('id', '=', jobId).executeTakeFirstOrThrow();
  return r.status;
}

/** Cancels a running job; NOT_FOUND outside the workspace, CONFLICT when it has already ended. */
export async function cancelImportJob(deps: Omit<ImportJobDeps, 'random'>, workspaceId: string, jobId: string): Promise<void> {
  const now = new Date(deps.clock.now());
  const r = await deps.store.db
    .updateTable('lead_import')
    .set({ status: 'cancelled', error: 'cancelled by the user', finished_at: now, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', jobId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) > 0) return;
  const status = await deps.store.db.selectFrom('lead_import').select('status').where('workspace_id', '=', workspaceId).where('id', '=', jobId).executeTakeFirst();
  if (!status) throw cadenzaError('NOT_FOUND', 'no such import');
  throw cadenzaError('CONFLICT', `the import has already ended (${status.status})`, { status: status.status });
}

/**
 * Marks the workspace's running jobs that made no progress for STALE_AFTER_MS as failed: their
 * process stopped (a crash, a restart) or their upload stalled. Run before the jobs are read, so a
 * job is never shown running forever.
 */
export async function failStaleJobs(deps: Omit<ImportJobDeps, 'random'>, workspaceId: string): Promise<void> {
  const now = deps.clock.now();
  await deps.store.db
    .updateTable('lead_import')
    .set({ status: 'failed', error: 'interrupted: no progress for 10 minutes (the server stopped or the upload stalled); the rows counted were written', finished_at: new Date(now), updated_at: new Date(now) })
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'running')
    .where('updated_at', '<', new Date(now - STALE_AFTER_MS))
    .execute();
}

/** Rejects read per query for the report. */
const REPORT_PAGE = 2000;

/**
 * The rejects report as CSV chunks, in line order: the file's own columns, then line, reason,
 * message and raw (the layout of `cadenza import --reject-file`, so a corrected report can be
 * imported again). Read a page at a time, never all at once. Null when no such job.
 */
export async function rejectsReport(db: Db, workspaceId: string, jobId: string): Promise<AsyncGenerator<string> | null> {
  const job = await db.selectFrom('lead_import').select(['headers', 'delimiter', 'bom', 'encoding']).where('workspace_id', '=', workspaceId).where('id', '=', jobId).executeTakeFirst();
  if (!job) return null;
  const headers = job.headers ?? [];
  const delimiter = job.delimiter ?? ',';
  // Excel reads UTF-8 only with a BOM; a file that came from it with one, or in Windows-1252, goes back with one.
  const bom = job.bom || job.encoding === 'windows-1252';
  return (async function* () {
    yield (bom ? '\ufeff' : '') + csvRecord([...headers, ...REJECT_FILE_COLUMNS], delimiter);
    let after = 0;
    for (;;) {
      const rows = await db
        .selectFrom('lead_import_reject')
        .select(['line', 'reason', 'message', 'fields', 'raw'])
        .where('import_id', '=', jobId)
        .where('workspace_id', '=', workspaceId)
        .where('line', '>', after)
        .orderBy('line')
        .limit(REPORT_PAGE)
        .execute();
      if (rows.length === 0) return;
      yield rows.map((r) => rejectRecord({ line: r.line, reason: r.reason, message: r.message, fields: r.fields, raw: r.raw ?? undefined }, headers.length, delimiter)).join('');
      after = rows[rows.length - 1]!.line;
      if (rows.length < REPORT_PAGE) return;
    }
  })();
}

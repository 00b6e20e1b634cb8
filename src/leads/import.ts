/**
 * CSV import of leads: the library behind `cadenza import`.
 *
 * Streams the file (one chunk and one batch in memory, plus one entry per distinct address for the
 * in-file duplicate check), checks every row (row.ts), and writes each batch of `batchSize` rows
 * with one suppression query and one multi-row upsert. A row that fails is rejected with a stable
 * reason (reasons.ts), a message and its line, written to the reject file and counted; nothing a
 * file holds makes the import throw. It throws INVALID_INPUT only for what makes the whole file
 * unusable (missing, unreadable, no header, no email column, a bad mapping), NOT_FOUND for an
 * unknown workspace, and passes database errors on.
 *
 * Each batch commits on its own: if the import stops half-way (a crash, a lost database), the
 * leads written so far stay, and running it again with onDuplicate 'skip' adds only the rest.
 * Suppression is checked just before each batch's upsert, not in the same statement: an address
 * suppressed in the milliseconds between the two is imported, and the sender's own suppression
 * check (at enrollment and at send) still stops it.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import type { Clock } from '../common/clock.ts';
import { systemClock } from '../common/clock.ts';
import { restoreFormulaText } from '../common/csv-write.ts';
import { cadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import { systemRandom, type Random } from '../common/random.ts';
import type { Store } from '../store/store.ts';
import { openCsv, type CsvSource, type Encoding, type EncodingChoice } from './csv-source.ts';
import { REJECT_FILE_COLUMNS, resolveColumns, type ResolvedColumn } from './headers.ts';
import { DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE, MAX_COLUMNS, MAX_ISSUE_SAMPLES } from './limits.ts';
import type { ImportIssue, RejectReason, WarningReason } from './reasons.ts';
import { RejectFile, type RejectRow } from './reject-file.ts';
import { phoneVerdict, type PhoneFlagCode } from './phone.ts';
import { checkRow, type LeadRow } from './row.ts';
import { findSuppressed } from './sql/find-suppressed.ts';
import { storedPhones } from './sql/stored-phones.ts';
import type { ErasureKey } from '../common/erasure-key.ts';
import { upsertLeads, type LeadInsert } from './sql/insert-leads.ts';

/** What became of the rows read so far. */
export interface RowCounts {
  rowsRead: number;
  imported: number;
  updated: number;
  /** onDuplicate 'update': rows that matched an existing lead that already had those values. */
  unchanged: number;
  rejected: number;
  warnings: number;
  /** Rows written (imported, updated or unchanged) whose phone number is flagged (phone.ts); never rejected for it. */
  phonesFlagged: number;
}

export interface ImportProgress extends RowCounts {
  bytesRead: number;
  /** Known when the input is a file path. */
  totalBytes?: number;
}

export interface ImportOptions {
  workspaceId: string;
  /** A file path, or a stream of its bytes. */
  input: NodeJS.ReadableStream | string;
  /**
   * CSV column → 'email' | 'first_name' | 'last_name' | 'company' | 'title' | 'phone' | 'country' |
   * 'region' | 'time_zone' | 'custom.<name>' | '-' (leave out). Columns it does not name are
   * matched by header synonyms; unmatched ones become custom fields.
   */
  mapping?: Record<string, string>;
  /** An email already in the workspace: reject the row ('duplicate', the default) or update the lead's non-empty fields. */
  onDuplicate?: 'skip' | 'update';
  /** Where to write the rejected rows (created or truncated; written even when nothing is rejected). */
  rejectFile?: string;
  /**
   * The erasure key (common/erasure-key.ts): rows whose address was erased from the workspace are
   * refused. Absent: only the plain suppression list is checked.
   */
  erasure?: ErasureKey;
  /** Rows per database round trip; default 1000, at most MAX_BATCH_SIZE. */
  batchSize?: number;
  /**
   * Called after each batch is written, the last call with the final counts; every count only
   * grows. A callback that throws stops the import with its error (the batches written stay).
   */
  onProgress?: (p: ImportProgress) => void;
  /** Every rejected row and every warning, in line order within each batch. */
  onIssue?: (issue: ImportIssue) => void;
  /** A byte-order mark wins; otherwise UTF-8 (the default), Windows-1252, or 'auto' (csv-source.ts). */
  encoding?: EncodingChoice;
  /** Called once the header is read, before any row: what the rejects of each batch are laid out by. */
  onHeader?: (h: ImportHeader) => Promise<void>;
  /**
   * Awaited after each batch is written (and before the next is), with the batch's rejects and the
   * settled counts: an import job commits its progress here. A throw stops the import with that
   * error; the batches written stay.
   */
  onBatch?: (b: ImportBatch) => Promise<void>;
  clock?: Clock;
  random?: Random;
}

export interface ImportHeader {
  /** The columns a reject keeps, in order (a re-imported reject file's bookkeeping columns left out). */
  headers: string[];
  columns: ResolvedColumn[];
  delimiter: string;
  encoding: Encoding;
  hadBom: boolean;
}

/**
 * Counts of the rows whose fate is decided, after a batch: rowsRead is always
 * imported + updated + unchanged + rejected (rows read but not yet written are not in it).
 */
export interface SettledCounts extends RowCounts {
  rejectsByReason: Record<string, number>;
  /** Rows written with a value dropped, per WarningReason. */
  warningsByReason: Record<string, number>;
  /** Rows written with a flagged phone number, per PhoneFlagCode (phone.ts). */
  phonesFlaggedByReason: Record<string, number>;
}

export interface ImportBatch {
  settled: SettledCounts;
  /** This batch's rejected rows, in line order. */
  rejects: readonly (RejectRow & { reason: RejectReason })[];
  /** The leads this batch inserted or updated (not the unchanged ones): what an import job enrolls. */
  leadIds: readonly string[];
  bytesRead: number;
}

export interface ImportResult {
  /** Data rows read (header, blank lines and all-blank rows not counted). */
  rowsRead: number;
  imported: number;
  updated: number;
  unchanged: number;
  rejected: number;
  rejectsByReason: Record<string, number>;
  /** Rows written (imported, updated or unchanged) with a value dropped (invalid_time_zone). */
  warnings: number;
  warningsByReason: Record<string, number>;
  /**
   * Rows written whose phone number is flagged, per PhoneFlagCode (phone.ts: too_short, not_valid,
   * no_country…); each lead keeps its number as written, with phone_status 'flagged' and the reason.
   */
  phonesFlagged: number;
  phonesFlaggedByReason: Record<string, number>;
  /** The first MAX_ISSUE_SAMPLES rejects and warnings. */
  issues: ImportIssue[];
  /** What each column fed. */
  columns: ResolvedColumn[];
  delimiter: string;
  encoding: Encoding;
  durationMs: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Pending {
  line: number;
  fields: readonly string[];
  lead: LeadRow;
  /** Counted only if the row is written: a warning is about a lead, not a rejected row. */
  warnings: Array<{ reason: WarningReason; message: string }>;
  /** Likewise: the flag of the number the lead has once written. */
  phoneFlag: PhoneFlagCode | null;
}

type WindowReject = RejectRow & { reason: RejectReason };

/** The rows read since the last flush: valid ones waiting for the database, and the issues. */
interface Window {
  rows: number;
  pending: Pending[];
  rejects: WindowReject[];
  warnings: ImportIssue[];
  /** The flags of the written rows' numbers. */
  phoneFlags: PhoneFlagCode[];
  /** Leads inserted or updated once the window is written. */
  written: string[];
}

const newWindow = (): Window => ({ rows: 0, pending: [], rejects: [], warnings: [], phoneFlags: [], written: [] });

export async function importLeads(store: Store, opts: ImportOptions): Promise<ImportResult> {
  const clock = opts.clock ?? systemClock;
  const random = opts.random ?? systemRandom();
  const started = clock.now();
  const { workspaceId } = opts;
  const mode = opts.onDuplicate ?? 'skip';
  const batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  checkOptions(opts, mode, batchSize);

  const ws = await store.db.selectFrom('workspace').select(['id', 'country']).where('id', '=', workspaceId).executeTakeFirst();
  if (!ws) throw cadenzaError('NOT_FOUND', `workspace ${workspaceId} does not exist`, { workspaceId });

  const input = await openInput(opts.input);
  let src: CsvSource | undefined;
  let rejects: RejectFile | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  try {
    src = await openCsv(input.stream, { encoding: opts.encoding ?? 'utf-8' });
    const first = await src.items.next();
    if (first.done) throw cadenzaError('INVALID_INPUT', 'the header line is empty: a header naming the columns is needed');
    const headerItem = first.value;
    if (headerItem.kind === 'malformed') {
      throw cadenzaError('INVALID_INPUT', `the header (line ${headerItem.line}) cannot be read: ${headerItem.message}`, { line: headerItem.line });
    }
    const headers = headerItem.fields.map((h) => h.trim());
    if (headers.length > MAX_COLUMNS) {
      throw cadenzaError('INVALID_INPUT', `the header has ${headers.length} columns, more than ${MAX_COLUMNS}: is the delimiter right?`, {
        columns: headers.length,
      });
    }
    const columns = resolveColumns(headers, opts.mapping);
    const fromRejectFile = columns.some((c) => c.source === 'reject_file');
    const copied = fromRejectFile ? headers.length - REJECT_FILE_COLUMNS.length : headers.length;
    if (opts.rejectFile !== undefined) rejects = await RejectFile.open(opts.rejectFile, headers, copied, src.delimiter, src.hadBom);
    await opts.onHeader?.({ headers: headers.slice(0, copied), columns, delimiter: src.delimiter, encoding: src.encoding, hadBom: src.hadBom });

    const counts = { rowsRead: 0, imported: 0, updated: 0, unchanged: 0, rejected: 0, warnings: 0, phonesFlagged: 0 };
    const rejectsByReason: Record<string, number> = {};
    const warningsByReason: Record<string, number> = {};
    const phonesFlaggedByReason: Record<string, number> = {};
    const samples: ImportIssue[] = [];
    // Counted per flushed window, unlike `counts`, which also holds the rows of the window being read.
    const settled: SettledCounts = { rowsRead: 0, imported: 0, updated: 0, unchanged: 0, rejected: 0, warnings: 0, phonesFlagged: 0, rejectsByReason: {}, warningsByReason: {}, phonesFlaggedByReason: {} };
    /** email_norm → the line of its first valid row. */
    const seen = new Map<string, number>();

    const rejectRow = (win: Window, r: WindowReject) => {
      counts.rejected++;
      rejectsByReason[r.reason] = (rejectsByReason[r.reason] ?? 0) + 1;
      win.rejects.push(r);
    };
    const warn = (win: Window, line: number, reason: WarningReason, message: string) => {
      counts.warnings++;
      warningsByReason[reason] = (warningsByReason[reason] ?? 0) + 1;
      win.warnings.push({ kind: 'warning', line, reason, message });
    };
    const flagPhone = (win: Window, code: PhoneFlagCode) => {
      counts.phonesFlagged++;
      phonesFlaggedByReason[code] = (phonesFlaggedByReason[code] ?? 0) + 1;
      win.phoneFlags.push(code);
    };
    const report = () =>
      opts.onProgress?.({ ...counts, bytesRead: src!.bytesRead(), ...(input.totalBytes !== undefined ? { totalBytes: input.totalBytes } : {}) });

    /**
     * Writes one window of rows: the valid ones to the database, then the window's rejects (in line
     * order) to the reject file, then the issues and the progress. Windows are flushed one after
     * another, but the next window is read and checked while this one is in the database: on
     * PostgreSQL that overlaps the two halves of the work (100k rows on a loaded 2-core machine:
     * about 6 s before, 3.5–5 s after). PGlite runs on this thread, so there it cannot overlap.
     */
    const flush = async (w: Window) => {
      try {
        await writeBatch(w);
      } catch (e) {
        // The rows refused for their content are known whatever the database did: keep them.
        w.rejects.sort((a, b) => a.line - b.line);
        await rejects?.write(w.rejects).catch(() => undefined);
        throw e;
      }
      w.rejects.sort((a, b) => a.line - b.line);
      await rejects?.write(w.rejects);
      const issues: ImportIssue[] = [
        ...w.rejects.map((r): ImportIssue => ({ kind: 'rejected', line: r.line, reason: r.reason, message: r.message })),
        ...w.warnings,
      ].sort((a, b) => a.line - b.line);
      for (const issue of issues) {
        if (samples.length < MAX_ISSUE_SAMPLES) samples.push(issue);
        opts.onIssue?.(issue);
      }
      settled.rowsRead += w.rows;
      settled.rejected += w.rejects.length;
      settled.warnings += w.warnings.length;
      settled.imported = counts.imported;
      settled.updated = counts.updated;
      settled.unchanged = counts.unchanged;
      for (const r of w.rejects) settled.rejectsByReason[r.reason] = (settled.rejectsByReason[r.reason] ?? 0) + 1;
      for (const x of w.warnings) settled.warningsByReason[x.reason] = (settled.warningsByReason[x.reason] ?? 0) + 1;
      settled.phonesFlagged += w.phoneFlags.length;
      for (const code of w.phoneFlags) settled.phonesFlaggedByReason[code] = (settled.phonesFlaggedByReason[code] ?? 0) + 1;
      await opts.onBatch?.({
        settled: { ...settled, rejectsByReason: { ...settled.rejectsByReason }, warningsByReason: { ...settled.warningsByReason }, phonesFlaggedByReason: { ...settled.phonesFlaggedByReason } },
        rejects: w.rejects,
        leadIds: w.written,
        bytesRead: src!.bytesRead(),
      });
      report();
    };

    /**
     * onDuplicate 'update' and a row that gives only one of number and country: the number is read
     * in the lead's country, so the other half is the stored lead's (read just before the upsert;
     * a change to the same lead between the two is the later write's). Without a stored lead, the
     * row's own verdict stands.
     */
    const completePhones = async (writing: Pending[]) => {
      const half = writing.filter((p) => (p.lead.phone === null) !== (p.lead.country === null));
      if (half.length === 0) return;
      const stored = await storedPhones(store.db, workspaceId, half.map((p) => p.lead.email_norm));
      for (const p of half) {
        const s = stored.get(p.lead.email_norm);
        if (!s) continue;
        const phone = p.lead.phone ?? s.phone;
        // A country-only row over a lead without a number: nothing to read (the nulls keep the stored columns).
        if (phone === null) continue;
        const v = phoneVerdict(phone, p.lead.country ?? s.country, ws.country);
        Object.assign(p.lead, v.columns);
        p.phoneFlag = v.code;
      }
    };

    /** The window's database half: suppression, then the upsert. */
    const writeBatch = async (w: Window) => {
      if (w.pending.length > 0) {
        const suppressed = await findSuppressed(store.db, workspaceId, w.pending.map((p) => p.lead.email_norm), opts.erasure);
        const writing: Pending[] = [];
        for (const p of w.pending) {
          const why = suppressed.get(p.lead.email_norm);
          if (why === undefined) writing.push(p);
          // Neither the row nor the address in the message: a reject is stored, and erasure promised the address is not.
          else if (why === 'erased') rejectRow(w, { line: p.line, fields: null, reason: 'erased', message: 'this address was erased from the workspace at its owner\'s request and cannot be imported again' });
          else rejectRow(w, { line: p.line, fields: p.fields, reason: 'suppressed', message: `${p.lead.email_norm} is suppressed in this workspace (${why})` });
        }
        if (mode === 'update') await completePhones(writing);
        const now = new Date(clock.now());
        const rows: LeadInsert[] = writing.map((p) => ({ id: newId(now.getTime(), random), ...p.lead, custom: JSON.stringify(p.lead.custom) }));
        const written = new Map((await upsertLeads(store.db, workspaceId, now, rows, mode)).map((r) => [r.email_norm, r]));
        for (const p of writing) {
          const lead = written.get(p.lead.email_norm);
          const inserted = lead?.inserted;
          if (inserted === undefined && mode === 'skip') {
            rejectRow(w, { line: p.line, fields: p.fields, reason: 'duplicate', message: `a lead with ${p.lead.email_norm} already exists in this workspace` });
            continue;
          }
          if (lead) w.written.push(lead.id);
          if (inserted === true) counts.imported++;
          else if (inserted === false) counts.updated++;
          else counts.unchanged++;
          for (const x of p.warnings) warn(w, p.line, x.reason, x.message);
          if (p.phoneFlag) flagPhone(w, p.phoneFlag);
        }
      }
    };

    let current = newWindow();
    const startFlush = async () => {
      await inFlight; // at most one window in the database, applied in order
      const ready = current;
      current = newWindow();
      inFlight = flush(ready);
      // Awaited before the next flush and at the end; this only keeps a failure from being
      // reported as unhandled while the next window is being read.
      inFlight.catch(() => undefined);
    };

    for await (const item of src.items) {
      counts.rowsRead++;
      current.rows++;
      if (item.kind === 'malformed') {
        rejectRow(current, { line: item.line, fields: null, reason: 'malformed_row', message: item.message, raw: item.raw });
      } else {
        // A reject file is Cadenza's own CSV: its formula-looking cells carry the ' it added (common/csv-write.ts).
        const fields = fromRejectFile ? item.fields.map(restoreFormulaText) : item.fields;
        const r = checkRow(fields, columns, ws.country);
        if (!r.ok) {
          rejectRow(current, { line: item.line, fields, reason: r.reason, message: r.message });
        } else {
          const firstLine = seen.get(r.lead.email_norm);
          if (firstLine !== undefined) {
            rejectRow(current, {
              line: item.line,
              fields: item.fields,
              reason: 'duplicate_in_file',
              message: `${r.lead.email_norm} already appears on line ${firstLine} of this file`,
            });
          } else {
            seen.set(r.lead.email_norm, item.line);
            current.pending.push({ line: item.line, fields: item.fields, lead: r.lead, warnings: r.warnings, phoneFlag: r.phoneFlag });
          }
        }
      }
      // Counting every row, not only the valid ones, bounds what waits in memory.
      if (current.rows >= batchSize) await startFlush();
    }
    await startFlush();
    await inFlight;
    await rejects?.close();
    rejects = undefined;

    return {
      ...counts,
      rejectsByReason,
      warningsByReason,
      phonesFlaggedByReason,
      issues: samples,
      columns,
      delimiter: src.delimiter,
      encoding: src.encoding,
      durationMs: clock.now() - started,
    };
  } finally {
    // Never return while a batch is still in the database or writing to the reject file.
    await inFlight.catch(() => undefined);
    await rejects?.abandon();
    await src?.items.return(undefined).catch(() => undefined);
    await input.close();
  }
}

function checkOptions(opts: ImportOptions, mode: string, batchSize: number): void {
  const bad = (message: string, details: Record<string, unknown>) => cadenzaError('INVALID_INPUT', message, details);
  if (typeof opts.workspaceId !== 'string' || !UUID.test(opts.workspaceId)) {
    throw bad(`workspaceId must be a UUID, got ${JSON.stringify(opts.workspaceId)}`, { workspaceId: opts.workspaceId });
  }
  if (mode !== 'skip' && mode !== 'update') throw bad(`onDuplicate must be 'skip' or 'update', got ${JSON.stringify(mode)}`, { onDuplicate: mode });
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw bad(`batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}, got ${String(batchSize)}`, { batchSize });
  }
  if (opts.mapping !== undefined) {
    if (typeof opts.mapping !== 'object' || opts.mapping === null || Array.isArray(opts.mapping)) {
      throw bad('mapping must be an object of column name → target', {});
    }
    for (const [k, v] of Object.entries(opts.mapping)) {
      if (typeof v !== 'string') throw bad(`mapping for column '${k}' must be a string`, { column: k });
    }
  }
  if (opts.rejectFile !== undefined) {
    if (typeof opts.rejectFile !== 'string' || opts.rejectFile === '') throw bad('rejectFile must be a file path', {});
    if (typeof opts.input === 'string' && resolvePath(opts.input) === resolvePath(opts.rejectFile)) {
      throw bad('the reject file cannot be the input file', { rejectFile: opts.rejectFile });
    }
  }
}

interface OpenedInput {
  stream: AsyncIterable<Buffer | string>;
  totalBytes?: number;
  close(): Promise<void>;
}

/** Opens an input file for reading, or says in plain words why it cannot be (INVALID_INPUT). */
export async function openInputFile(input: string): Promise<FileHandle> {
  try {
    return await open(input, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
    throw cadenzaError('INVALID_INPUT', `cannot open the input file ${input}: ${why}`, { path: input, code });
  }
}

async function openInput(input: NodeJS.ReadableStream | string): Promise<OpenedInput> {
  if (typeof input !== 'string') {
    if (input === null || typeof input !== 'object' || typeof (input as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] !== 'function') {
      throw cadenzaError('INVALID_INPUT', 'input must be a file path or a readable stream', {});
    }
    // The caller's stream: stopped (through its iterator) when the import stops reading early.
    return { stream: input as AsyncIterable<Buffer | string>, close: async () => undefined };
  }
  const fh = await openInputFile(input);
  let size: number;
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw cadenzaError('INVALID_INPUT', `the input ${input} is not a regular file`, { path: input });
    size = st.size;
  } catch (e) {
    await fh.close();
    throw e;
  }
  const stream = fh.createReadStream({ highWaterMark: 256 * 1024 });
  return {
    stream,
    totalBytes: size,
    async close() {
      stream.destroy();
      await fh.close().catch(() => undefined);
    },
  };
}

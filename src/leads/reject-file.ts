/**
 * The reject file: the header's columns, then line, reason, message and raw. A row refused for its
 * content keeps its fields, so the file can be corrected and imported again (the four bookkeeping
 * columns are then left out by resolveColumns). A malformed row has no fields to trust: its source
 * text goes in 'raw'. Same delimiter as the input, CRLF line ends (RFC 4180), and a BOM when the
 * input had one (Excel needs it to read UTF-8).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { csvRecord } from '../common/csv-write.ts';
import { cadenzaError } from '../common/errors.ts';
import { REJECT_FILE_COLUMNS } from './headers.ts';

export interface RejectRow {
  line: number;
  reason: string;
  message: string;
  /** The row's fields, or null for a malformed row. */
  fields: readonly string[] | null;
  raw?: string;
}

export class RejectFile {
  /** The stream's first error. A listener always stays attached: an unheard stream error would crash the process. */
  private failed: Error | null = null;

  private constructor(
    private readonly out: WriteStream,
    private readonly width: number,
    private readonly delimiter: string,
    private readonly path: string,
  ) {
    out.on('error', (e) => {
      this.failed ??= e;
    });
  }

  /**
   * Creates (or truncates) the file and writes its header. `width` columns of each row are copied:
   * fewer than the header has when the input is itself a reject file, whose bookkeeping is replaced.
   */
  static async open(path: string, headers: readonly string[], width: number, delimiter: string, bom: boolean): Promise<RejectFile> {
    const out = createWriteStream(path, { flags: 'w' });
    const f = new RejectFile(out, width, delimiter, path);
    try {
      await once(out, 'open');
    } catch (e) {
      throw cadenzaError('INVALID_INPUT', `cannot write the reject file ${path}: ${(e as Error).message}`, { path });
    }
    await f.put((bom ? '\ufeff' : '') + f.encode([...headers.slice(0, width), ...REJECT_FILE_COLUMNS]));
    return f;
  }

  async write(rows: readonly RejectRow[]): Promise<void> {
    if (rows.length === 0) return;
    let chunk = '';
    for (const r of rows) chunk += rejectRecord(r, this.width, this.delimiter);
    await this.put(chunk);
  }

  /** Flushes and closes; throws if any write failed. */
  async close(): Promise<void> {
    if (!this.out.writableEnded) {
      await new Promise<void>((resolve) => {
        this.out.once('error', () => resolve());
        this.out.end(() => resolve());
      });
    }
    this.check();
  }

  /**
   * Closes without waiting, after a failure elsewhere. Ends rather than destroys, so the rejects
   * written so far reach the file: they are what the user needs to see after a failed import.
   */
  async abandon(): Promise<void> {
    if (this.out.writableEnded) return;
    await new Promise<void>((resolve) => {
      this.out.once('error', () => resolve());
      this.out.end(() => resolve());
    });
  }

  private async put(s: string): Promise<void> {
    this.check();
    try {
      if (!this.out.write(s)) await once(this.out, 'drain');
    } catch (e) {
      this.failed ??= e as Error;
    }
    this.check();
  }

  private check(): void {
    if (this.failed) {
      throw cadenzaError('INVALID_INPUT', `cannot write the reject file ${this.path}: ${this.failed.message}`, { path: this.path });
    }
  }

  private encode(cells: readonly string[]): string {
    return csvRecord(cells, this.delimiter);
  }
}

/** A reject as the file lays it out: the copied columns, then line, reason, message and raw. */
export function rejectRecord(r: RejectRow, width: number, delimiter: string): string {
  const cells: string[] = [];
  for (let i = 0; i < width; i++) cells.push(r.fields?.[i] ?? '');
  cells.push(String(r.line), r.reason, r.message, r.raw ?? '');
  return csvRecord(cells, delimiter);
}

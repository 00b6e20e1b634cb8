import { open, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { cadenzaError } from '../common/errors.ts';
import { takePidLock } from '../common/pid-lock.ts';
import { ensurePrivateDir } from '../common/private-files.ts';

/**
 * An append-only local journal of clicks, group-committed: the click redirect is answered once its
 * record is on disk (write + fdatasync), and the database is written behind in large batches, as
 * opens are (recorder.ts). Why: a click written to the database before its answer costs a
 * transaction per group of concurrent clicks (about 650 µs of the server's CPU each on PostgreSQL,
 * 25 clicks a group at 50 connections; docs/benchmarks.md, "Tracking endpoints"); one write and
 * one fdatasync per group cost the server a few microseconds, and the database then sees 1,000-row
 * inserts.
 *
 * Records are JSON lines in segment files `clicks-<n>.jsonl`. Each append resolves with its
 * segment's number once durable; the recorder settles each record (settle) once its batch has
 * committed, and a segment that is no longer the one being appended to and has nothing
 * outstanding is deleted. A segment is closed for appends after SEGMENT_RECORDS records.
 *
 * Each segment is written full of zeros (and synced) when it is opened, and records are written
 * over the zeros at increasing offsets: an fdatasync then flushes only the data, where an append
 * that grows the file also commits its new size through the file system's journal. Measured on
 * ext4 (groups of 25 lines): 60–85 µs of CPU and 0.2–0.3 ms per group over zeros, against
 * 125–280 µs and 0.4–4 ms appending (docs/benchmarks.md). A segment's records end at its first
 * NUL byte.
 *
 * A crash leaves segments behind: open() reads them back (replay) and they are written again, the
 * recorder skipping a click already in the database (a crash between a batch's commit and its
 * settle). A torn last line (a write cut by the crash) was never acknowledged, since a record is
 * acknowledged only after fdatasync: it is skipped. One journal directory per process: two
 * processes appending to one directory would replay each other's segments, so the directory is held
 * by a lock file (`journal.lock`, the holder's pid) and a second live process is refused.
 */

/** Records per segment before the next one is opened (a few MB of JSON). */
const SEGMENT_RECORDS = 10_000;
/** Bytes of zeros a segment is made with: room for SEGMENT_RECORDS records of about 400 bytes; a larger group gets a segment its size. */
const SEGMENT_BYTES = 4 * 1024 * 1024;
const NAME = /^clicks-(\d{12})\.jsonl$/;

const segmentName = (n: number) => `clicks-${String(n).padStart(12, '0')}.jsonl`;

export interface Replayed {
  segment: number;
  records: unknown[];
  /** Lines that did not parse (a torn last write). */
  skipped: number;
}

export class ClickJournal {
  private lines: string[] = [];
  private waiters: Array<{ resolve(seg: number): void; reject(e: unknown): void }> = [];
  private writing = false;
  private scheduled = false;
  private closed = false;
  private unlock: () => void = () => undefined;
  /** Records appended (durable) and not yet settled, by segment. */
  private readonly outstanding = new Map<number, number>();
  private segmentRecords = 0;
  /** Where the next group is written in the current segment, and the segment's size. */
  private offset = 0;
  /** Group writes (write + fdatasync) and the records they carried, for stats. */
  private writes = 0;
  private records = 0;

  private constructor(
    private readonly dir: string,
    private fh: FileHandle,
    private segment: number,
    private size: number,
  ) {}

  /**
   * Opens the journal in dir (created if missing): the segments a previous process left are read
   * back and returned (each still on disk until its records are settled), and appends go to a new
   * segment after them.
   */
  static async open(dir: string): Promise<{ journal: ClickJournal; replayed: Replayed[] }> {
    // Clicks carry addresses and user agents (personal data): the journal is the process account's alone.
    ensurePrivateDir(dir);
    const lockFile = join(dir, 'journal.lock');
    const unlock = takePidLock(lockFile, (holder) =>
      cadenzaError('CONFIG_INVALID', `the click journal ${dir} is in use by process ${holder}: each Cadenza process needs its own journal folder (CADENZA_CLICK_JOURNAL_DIR). If no Cadenza runs, remove ${lockFile}.`, { holder, lockFile }),
    );
    const names = (await readdir(dir)).filter((f) => NAME.test(f)).sort();
    const replayed: Replayed[] = [];
    let last = 0;
    for (const name of names) {
      const segment = Number(NAME.exec(name)![1]);
      last = Math.max(last, segment);
      const records: unknown[] = [];
      let skipped = 0;
      const bytes = await readFile(join(dir, name));
      const end = bytes.indexOf(0);
      for (const line of bytes.toString('utf8', 0, end < 0 ? bytes.length : end).split('\n')) {
        if (line === '') continue;
        try {
          records.push(JSON.parse(line));
        } catch {
          skipped++;
        }
      }
      replayed.push({ segment, records, skipped });
    }
    const segment = last + 1;
    const journal = new ClickJournal(dir, await openSegment(dir, segment, SEGMENT_BYTES), segment, SEGMENT_BYTES);
    journal.unlock = unlock;
    for (const r of replayed) {
      journal.outstanding.set(r.segment, r.records.length);
      if (r.records.length === 0) await journal.release(r.segment);
    }
    return { journal, replayed };
  }

  /**
   * Appends one record; resolves with its segment once it is on disk. Records appended in the same
   * turn of the event loop (and while a write is in flight) share one write and one fdatasync.
   * Rejects if the disk refuses (the caller then records the click another way).
   */
  append(record: unknown): Promise<number> {
    if (this.closed) return Promise.reject(new Error('click journal closed'));
    const line = JSON.stringify(record) + '\n';
    return new Promise<number>((resolve, reject) => {
      this.lines.push(line);
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Marks n records of a segment written to the database; deletes the segment once it is done with. */
  settle(segment: number, n = 1): void {
    const left = (this.outstanding.get(segment) ?? 0) - n;
    this.outstanding.set(segment, left);
    if (left <= 0 && segment !== this.segment) void this.release(segment);
  }

  /** Records on disk and not yet settled; group writes made and the records they carried (for stats and tests). */
  stats(): { unsettled: number; writes: number; records: number } {
    let unsettled = 0;
    for (const v of this.outstanding.values()) unsettled += v;
    return { unsettled, writes: this.writes, records: this.records };
  }

  /** Waits for the write in flight, then closes; the current segment is deleted if nothing in it is outstanding. */
  async close(): Promise<void> {
    while (this.writing || this.scheduled || this.lines.length > 0) await new Promise((r) => setImmediate(r));
    this.closed = true;
    await this.fh.close();
    if ((this.outstanding.get(this.segment) ?? 0) <= 0) await this.release(this.segment);
    this.unlock();
  }

  private schedule(): void {
    if (this.writing || this.scheduled) return;
    this.scheduled = true;
    // A phase of the event loop, not a timer: the requests parsed in this turn join the group.
    setImmediate(() => {
      this.scheduled = false;
      void this.writeGroup();
    });
  }

  private async writeGroup(): Promise<void> {
    if (this.lines.length === 0) return;
    this.writing = true;
    const lines = this.lines;
    const waiters = this.waiters;
    this.lines = [];
    this.waiters = [];
    try {
      const data = Buffer.from(lines.join(''), 'utf8');
      if (this.segmentRecords >= SEGMENT_RECORDS || this.offset + data.length > this.size) await this.rotate(data.length);
      const seg = this.segment;
      await this.fh.write(data, 0, data.length, this.offset);
      await this.fh.datasync();
      this.offset += data.length;
      this.segmentRecords += lines.length;
      this.writes++;
      this.records += lines.length;
      this.outstanding.set(seg, (this.outstanding.get(seg) ?? 0) + lines.length);
      for (const w of waiters) w.resolve(seg);
    } catch (e) {
      for (const w of waiters) w.reject(e);
    } finally {
      this.writing = false;
      if (this.lines.length > 0) this.schedule();
    }
  }

  private async rotate(groupBytes: number): Promise<void> {
    const old = this.segment;
    const size = Math.max(SEGMENT_BYTES, groupBytes);
    const fh = await openSegment(this.dir, old + 1, size);
    await this.fh.close();
    this.fh = fh;
    this.segment = old + 1;
    this.size = size;
    this.segmentRecords = 0;
    this.offset = 0;
    if ((this.outstanding.get(old) ?? 0) <= 0) await this.release(old);
  }

  private async release(segment: number): Promise<void> {
    this.outstanding.delete(segment);
    await unlink(join(this.dir, segmentName(segment))).catch(() => undefined);
  }
}

/** A new segment file of `size` zero bytes, synced with its directory so that the file and its size survive a crash. */
async function openSegment(dir: string, segment: number, size: number): Promise<FileHandle> {
  const fh = await open(join(dir, segmentName(segment)), 'w', 0o600);
  await fh.write(Buffer.alloc(size), 0, size, 0);
  await fh.sync();
  const d = await open(dir, 'r');
  try {
    await d.datasync();
  } finally {
    await d.close();
  }
  return fh;
}

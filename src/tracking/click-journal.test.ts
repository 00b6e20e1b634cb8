import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClickJournal } from './click-journal.ts';

const dirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'cadenza-click-journal-test-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const segments = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort();
/** A segment's records: its lines up to the first NUL (the zeros it was made with). */
const written = (dir: string, name: string) => {
  const bytes = readFileSync(join(dir, name));
  const end = bytes.indexOf(0);
  return bytes.toString('utf8', 0, end < 0 ? bytes.length : end);
};
const lines = (dir: string, name: string) => written(dir, name).split('\n').filter(Boolean);

describe('click journal', () => {
  it('resolves an append once its line is on disk; appends of one turn share one write', async () => {
    const dir = freshDir();
    const { journal, replayed } = await ClickJournal.open(dir);
    expect(replayed).toEqual([]);
    const segs = await Promise.all([1, 2, 3].map((n) => journal.append({ n })));
    expect(new Set(segs).size).toBe(1);
    const [name] = segments(dir);
    expect(lines(dir, name!)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    // Made full of zeros and written over: a sync flushes data, not a new file size.
    expect(statSync(join(dir, name!)).size).toBe(4 * 1024 * 1024);
    expect(journal.stats()).toEqual({ unsettled: 3, writes: 1, records: 3 });
    // Addresses and user agents: nobody but the process's account may read them.
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, name!)).mode & 0o077).toBe(0);
    await journal.close();
    // Nothing settled: the segment stays for the next start.
    expect(segments(dir)).toEqual([name]);
  });

  it('replays what a stopped process left, skipping a torn last line, and deletes a segment once every record is settled', async () => {
    const dir = freshDir();
    const first = await ClickJournal.open(dir);
    const seg = await first.journal.append({ n: 1 });
    await first.journal.append({ n: 2 });
    // A crash: the journal is never closed, and the last write was cut in the middle of a line.
    const [name] = segments(dir);
    // Written over the zeros right after the last record, as the next group's write would be.
    const fd = openSync(join(dir, name!), 'r+');
    writeSync(fd, '{"n":3,"u":"htt', Buffer.byteLength(written(dir, name!)));
    closeSync(fd);

    const second = await ClickJournal.open(dir);
    expect(second.replayed).toEqual([{ segment: seg, records: [{ n: 1 }, { n: 2 }], skipped: 1 }]);
    const next = await second.journal.append({ n: 4 });
    expect(next).toBeGreaterThan(seg);
    expect(segments(dir)).toHaveLength(2);
    second.journal.settle(seg);
    expect(segments(dir)).toHaveLength(2); // one record of it still outstanding
    second.journal.settle(seg);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 20));
    expect(segments(dir)).toHaveLength(1);
    second.journal.settle(next);
    await second.journal.close();
    expect(segments(dir)).toEqual([]);
    await first.journal.close();
  });

  it('rotates to a new segment after 10,000 records and deletes the old one when it is settled', async () => {
    const dir = freshDir();
    const { journal } = await ClickJournal.open(dir);
    const first = await Promise.all(Array.from({ length: 10_000 }, (_, n) => journal.append({ n })));
    const seg = first[0]!;
    expect(new Set(first)).toEqual(new Set([seg]));
    const later = await journal.append({ n: 10_000 });
    expect(later).toBe(seg + 1);
    expect(segments(dir)).toHaveLength(2);
    journal.settle(seg, 10_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(segments(dir)).toHaveLength(1);
    journal.settle(later);
    await journal.close();
    expect(segments(dir)).toEqual([]);
  });

  it('gives a group larger than a segment a segment of its own size, and reads it back whole', async () => {
    const dir = freshDir();
    const { journal } = await ClickJournal.open(dir);
    const first = await journal.append({ n: 0 });
    const big = 'x'.repeat(3000);
    const segs = await Promise.all(Array.from({ length: 1500 }, (_, n) => journal.append({ n, big }))); // about 4.5 MB in one group
    expect(new Set(segs)).toEqual(new Set([first + 1]));
    const name = segments(dir).at(-1)!;
    expect(lines(dir, name)).toHaveLength(1500);
    expect(statSync(join(dir, name)).size).toBeGreaterThan(4 * 1024 * 1024);
    const again = await ClickJournal.open(dir);
    expect(again.replayed.map((r) => [r.segment, r.records.length, r.skipped])).toEqual([
      [first, 1, 0],
      [first + 1, 1500, 0],
    ]);
    await again.journal.close();
    await journal.close();
  });

  it('rejects appends after close; at open, deletes an empty segment and leaves other files alone', async () => {
    const dir = freshDir();
    const { journal } = await ClickJournal.open(dir);
    await journal.close();
    await expect(journal.append({ n: 1 })).rejects.toThrow(/closed/);
    // An empty segment left behind is deleted at open; a file that is not a segment is left alone.
    writeFileSync(join(dir, 'clicks-000000000007.jsonl'), '');
    writeFileSync(join(dir, 'notes.txt'), 'x');
    const again = await ClickJournal.open(dir);
    expect(again.replayed).toEqual([{ segment: 7, records: [], skipped: 0 }]);
    expect(readdirSync(dir).sort()).toEqual(['clicks-000000000008.jsonl', 'journal.lock', 'notes.txt']);
    await again.journal.close();
  });

  it('holds its folder: a second live process is refused, a dead holder\'s lock is taken over, close lets go', async () => {
    const dir = freshDir();
    // The parent process is alive and is not this one: it stands for another Cadenza.
    writeFileSync(join(dir, 'journal.lock'), `${process.ppid}\n`);
    await expect(ClickJournal.open(dir)).rejects.toThrow(/in use by process \d+.*its own journal folder/);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(dir, 'journal.lock'), `${dead}\n`);
    const { journal } = await ClickJournal.open(dir);
    expect(readFileSync(join(dir, 'journal.lock'), 'utf8').trim()).toBe(String(process.pid));
    await journal.close();
    expect(readdirSync(dir)).not.toContain('journal.lock');
  });
});

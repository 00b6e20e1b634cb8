import { describe, expect, it } from 'vitest';
import { parseImapCursor, planBatches, planFolder, withinWindow, type FolderCursor, type OpenedFolder } from './imap-cursor.ts';

const stored: FolderCursor = { path: 'INBOX', uidValidity: '100', lastUid: 41, highestModseq: '500' };
const opened = (o: Partial<OpenedFolder> = {}): OpenedFolder => ({ path: 'INBOX', uidValidity: '100', uidNext: 42, highestModseq: '500', ...o });

describe('IMAP cursor', () => {
  it('parses its own shape and reads anything else as "no cursor" (rescan the window)', () => {
    const c = { kind: 'imap', v: 1, folders: { inbox: stored, junk: { path: 'Junk', uidValidity: '7', lastUid: 0 } } };
    expect(parseImapCursor(c)).toEqual(c);
    for (const bad of [null, {}, { kind: 'gmail', historyId: '5' }, { kind: 'imap', v: 2, folders: {} }]) expect(parseImapCursor(bad)).toEqual({ kind: 'imap', v: 1, folders: {} });
    // A damaged folder entry is dropped alone; mod-sequences beyond 2^53 stay exact (strings).
    const big = { kind: 'imap', v: 1, folders: { inbox: { ...stored, highestModseq: '9007199254740993' }, junk: { path: 'Junk', uidValidity: 'x', lastUid: 1 } } };
    expect(parseImapCursor(big)).toEqual({ kind: 'imap', v: 1, folders: { inbox: { ...stored, highestModseq: '9007199254740993' } } });
    expect(parseImapCursor({ kind: 'imap', v: 1, folders: { inbox: { ...stored, lastUid: -1 } } }).folders).toEqual({});
  });

  it('plans a window scan without a cursor, after a UIDVALIDITY change, or when the folder moved', () => {
    expect(planFolder(undefined, opened())).toEqual({ kind: 'window', reason: 'first_sync' });
    expect(planFolder(stored, opened({ uidValidity: '101' }))).toEqual({ kind: 'window', reason: 'uidvalidity_changed' });
    expect(planFolder({ ...stored, path: 'Junk' }, opened())).toEqual({ kind: 'window', reason: 'folder_changed' });
  });

  it('sends nothing when HIGHESTMODSEQ (CONDSTORE) or UIDNEXT proves nothing arrived', () => {
    expect(planFolder(stored, opened())).toEqual({ kind: 'unchanged' });
    // A flag change raised HIGHESTMODSEQ but UIDNEXT did not move: still nothing to fetch.
    expect(planFolder(stored, opened({ highestModseq: '510' }))).toEqual({ kind: 'unchanged' });
    expect(planFolder({ ...stored, highestModseq: '9007199254740993' }, opened({ highestModseq: '9007199254740993', uidNext: 60 }))).toEqual({ kind: 'unchanged' });
  });

  it('fetches above lastUid, with CHANGEDSINCE only when both sides have mod-sequences', () => {
    expect(planFolder(stored, opened({ uidNext: 45, highestModseq: '9007199254740995' }))).toEqual({ kind: 'incremental', afterUid: 41, changedSince: '500' });
    expect(planFolder(stored, opened({ uidNext: 45, highestModseq: null }))).toEqual({ kind: 'incremental', afterUid: 41, changedSince: null });
    const { highestModseq: _, ...uidOnly } = stored;
    expect(planFolder(uidOnly, opened({ uidNext: 45 }))).toEqual({ kind: 'incremental', afterUid: 41, changedSince: null });
    expect(planFolder(uidOnly, opened({ uidNext: null }))).toEqual({ kind: 'incremental', afterUid: 41, changedSince: null });
  });

  it('batches by count and by bytes, an oversize message weighing nothing and a lone large one passing', () => {
    const m = (uid: number, size: number) => ({ uid, size, internalDate: 0 });
    const opts = { batchSize: 3, maxBatchBytes: 1_000, maxMessageBytes: 2_000 };
    const uids = (b: Array<Array<{ uid: number }>>) => b.map((x) => x.map((y) => y.uid));
    expect(uids(planBatches([1, 2, 3, 4, 5, 6, 7].map((u) => m(u, 10)), opts))).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(uids(planBatches([m(1, 600), m(2, 600), m(3, 1_500), m(4, 9_999), m(5, 100)], opts))).toEqual([[1], [2], [3, 4], [5]]);
    expect(planBatches([], opts)).toEqual([]);
  });

  it('keeps what arrived inside the window (and what has no date), in UID order', () => {
    const metas = [{ uid: 9, size: 1, internalDate: 2_000 }, { uid: 3, size: 1, internalDate: 999 }, { uid: 5, size: 1, internalDate: null }, { uid: 4, size: 1, internalDate: 1_000 }];
    expect(withinWindow(metas, 1_000).map((x) => x.uid)).toEqual([4, 5, 9]);
  });
});

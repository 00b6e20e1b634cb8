import { isIP } from 'node:net';
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Store } from '../store/store.ts';
import { BatchWriter, type BatchWriterOptions, type BatchWriterStats, type WaitOutcome } from './batch-writer.ts';
import { ClickJournal } from './click-journal.ts';
import { classifyClick, classifyOpen } from './classify.ts';
import { insertTrackingEvents, type TrackingRow } from './sql/insert-tracking-events.ts';
import { sendTimes } from './sql/send-times.ts';
import { openToken, UUID, type ClickToken } from './tokens.ts';

/** What an HTTP request tells about who made it. */
export interface RequestFacts {
  method: string;
  userAgent: string | undefined | null;
  ip: string | undefined | null;
}

/** One open or click as captured at request time; classified when its batch is written. */
interface Hit {
  kind: 'open' | 'click';
  /** An open's token, still sealed: opened when its batch is written (see recordOpen). */
  sealed: string | null;
  ws: string;
  sr: string;
  url: string | null;
  linkIndex: number | null;
  method: string;
  userAgent: string | null;
  ip: string | null;
  at: number;
  recentOtherLinks: ReadonlyArray<{ linkIndex: number; agoMs: number }>;
  /** The click journal's segment holding this hit, settled once it is written; -1 when not journaled. */
  seg: number;
  /** Read back from the journal at start: it may already be in the database (see click-journal.ts). */
  replayed: boolean;
}

/** How a click was made durable before its answer: in the local journal, or the database's outcome. */
export type ClickOutcome = WaitOutcome | 'journaled';

export type RecorderOptions = Partial<Pick<BatchWriterOptions<unknown>, 'maxBatch' | 'flushMs' | 'maxQueue' | 'maxAttempts' | 'retryMs' | 'waitMs'>>;

export interface RecorderDeps {
  store: Store;
  clock: Clock;
  /** trackingKey(master): opens are unsealed when written. */
  key: Buffer;
  log?: Logger;
  batch?: RecorderOptions;
}

/** A user agent longer than this is cut: real ones are a few hundred characters, and it is evidence, not payload. */
const MAX_UA = 512;
/** How long this process remembers a message's clicks, for the "every link at once" rule. */
const RECENT_CLICKS_MS = 30_000;
/** How many messages' recent clicks are remembered; the oldest are forgotten first. */
const RECENT_CLICKS_MAX = 20_000;
/** How many distinct links of one message are remembered (a burst rule needs three). */
const RECENT_LINKS_MAX = 50;
const NO_CLICKS: ReadonlyArray<{ linkIndex: number; agoMs: number }> = Object.freeze([]);
/** How many sends' times are kept in memory: a send's time never changes once it is sent. */
const SENT_CACHE_MAX = 50_000;
/** At most one overflow warning per this long: an overflow happens under load, when logs cost most. */
const DROP_LOG_EVERY_MS = 10_000;

/**
 * Records opens and clicks in batches (batch-writer.ts), by two rules:
 *   - A click is group-committed (addAndWait): the redirect is answered once the click's batch
 *     has committed, so an answered click is in the database (unless the database was failing or
 *     slower than waitMs at that moment: then it is retried from memory, batch-writer.ts).
 *   - An open is written behind (add): the GIF is answered at once and the open written with the
 *     next batch (maxBatch or flushMs, 1 s by default, and on close). A process that dies loses
 *     the opens of its last second. Opens are the noisy signal (image proxies fetch every pixel,
 *     and most opens are theirs) and the image must never wait; a click is a person's intent,
 *     acted on by reps, reports and webhooks.
 * Per batch, opens' tokens are unsealed, the send times looked up (and kept), each hit classified
 * (classify.ts) with its delay since the send, and the batch inserted in one statement: the
 * request path itself runs no query. Memory: at most maxQueue hits (100,000 by default, a few
 * hundred bytes each).
 */
export class TrackingRecorder {
  private readonly writer: BatchWriter<Hit>;
  /** Per send request: link index -> its last click, least recent first. */
  private readonly recent = new Map<string, Map<number, number>>();
  /** Send time by send request, so that a busy message's opens cost no lookup after the first batch. */
  private readonly sentAt = new Map<string, number>();
  private invalid = 0;
  private journal: ClickJournal | null = null;
  private lastDropLog = -Infinity;
  private droppedSinceLog = 0;

  constructor(private readonly deps: RecorderDeps) {
    this.writer = new BatchWriter<Hit>({
      ...deps.batch,
      clock: deps.clock,
      write: (hits) => this.write(hits),
      onError: (err, info) => deps.log?.error({ err, ...info }, info.dropped ? 'tracking events dropped after failed writes' : 'tracking events write failed; will retry'),
      onDrop: (count, why) => this.onDrop(count, why),
    });
  }

  /**
   * Queues an open with its token still sealed. The pixel's answer does not depend on the token, so
   * it is opened later, with the rest of its batch: measured under load, an unseal costs about 20 µs
   * of CPU in the middle of request handling and about 6 µs in a run of unseals (warm caches), which
   * is most of the pixel's cost over a bare route. A token that does not open is dropped then.
   */
  recordOpen(sealed: string, req: RequestFacts): boolean {
    return this.writer.add({ kind: 'open', sealed, ws: '', sr: '', url: null, linkIndex: null, ...this.facts(req), recentOtherLinks: NO_CLICKS, seg: -1, replayed: false });
  }

  /**
   * Resolves once the click is durable: in the click journal when one is open (then written to the
   * database behind, like opens), else committed to the database (group commit, batch-writer.ts).
   * A journal that fails to write falls back to the database for that click.
   */
  async recordClick(token: ClickToken, req: RequestFacts): Promise<ClickOutcome> {
    const f = this.facts(req);
    const hit: Hit = { kind: 'click', sealed: null, ws: token.ws, sr: token.sr, url: token.u, linkIndex: token.i, ...f, recentOtherLinks: this.noteClick(token.sr, token.i, f.at), seg: -1, replayed: false };
    const journal = this.journal;
    if (journal) {
      try {
        hit.seg = await journal.append(journalRecord(hit));
      } catch (err) {
        this.deps.log?.error({ err }, 'click journal write failed; the click is committed to the database instead');
        return this.writer.addAndWait(hit);
      }
      // Queue full: the click stays in the journal, unsettled, and is written at the next start.
      this.writer.add(hit);
      return 'journaled';
    }
    return this.writer.addAndWait(hit);
  }

  /**
   * Opens the click journal in dir (see click-journal.ts): clicks a previous process journaled and
   * did not write to the database are queued again, and from now on a click is answered once it is
   * in the journal. Call before serving (registerTracking does, on the server's ready).
   */
  async openJournal(dir: string): Promise<{ replayed: number; skipped: number }> {
    const { journal, replayed } = await ClickJournal.open(dir);
    let n = 0;
    let skipped = 0;
    for (const seg of replayed) {
      skipped += seg.skipped;
      for (const r of seg.records) {
        const hit = fromJournal(r, seg.segment);
        if (hit) {
          // Queued even past maxQueue would be refused: the segment then stays for the next start.
          if (this.writer.add(hit)) n++;
        } else {
          skipped++;
          journal.settle(seg.segment);
        }
      }
    }
    if (n > 0 || skipped > 0) this.deps.log?.warn({ replayed: n, skipped }, 'click journal replayed: clicks answered before a stop are written now');
    this.journal = journal;
    if (n > 0) await this.writer.flush();
    return { replayed: n, skipped };
  }

  /** Resolves when no batch is being written (one started by size or by the timer has finished). */
  idle(): Promise<void> {
    return this.writer.idle();
  }

  /** Writes what is queued now. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Stops taking events and writes what is queued (the server's onClose calls it). */
  close(): Promise<void> {
    this.recent.clear();
    // The journal stays open while the writer's last batches go: each settles its clicks in it.
    return this.writer
      .close()
      .then(async () => {
        const journal = this.journal;
        this.journal = null;
        await journal?.close();
      })
      .finally(() => this.sentAt.clear());
  }

  /** The batch writer's counters, and how many queued opens had a token that did not open. */
  /** journaled: clicks in the journal not yet in the database; journalWrites: its group writes so far (clicks per write = journalRecords / journalWrites). */
  stats(): BatchWriterStats & { invalid: number; journaled: number; journalWrites: number; journalRecords: number } {
    const j = this.journal?.stats();
    return { ...this.writer.stats(), invalid: this.invalid, journaled: j?.unsettled ?? 0, journalWrites: j?.writes ?? 0, journalRecords: j?.records ?? 0 };
  }

  private facts(req: RequestFacts): { method: string; userAgent: string | null; ip: string | null; at: number } {
    // Control characters are no evidence, and a NUL cannot be stored in a text column (it would fail the batch).
    const ua = typeof req.userAgent === 'string' ? req.userAgent.slice(0, MAX_UA).replace(/[\u0000-\u001f\u007f]/g, '') : null;
    // The column is inet: anything that is not an address is no evidence, and must not fail a batch.
    const ip = typeof req.ip === 'string' && isIP(req.ip) ? req.ip : null;
    return { method: req.method.toUpperCase().slice(0, 16), userAgent: ua, ip, at: this.deps.clock.now() };
  }

  /**
   * Remembers this click and returns the message's other links clicked in the last
   * RECENT_CLICKS_MS, each with its latest click (all the classifier asks: which other links, how
   * long ago at least). Kept per message as link -> last click, so a busy message costs its few
   * distinct links per click, not its whole click history. Only this process's clicks: with several
   * API processes a burst split between them is seen in part, and the delay rule still catches most
   * gateways.
   */
  private noteClick(sr: string, linkIndex: number, at: number): ReadonlyArray<{ linkIndex: number; agoMs: number }> {
    let links = this.recent.get(sr);
    let others: Array<{ linkIndex: number; agoMs: number }> | null = null;
    if (links) {
      // Delete and set again below: a Map iterates in insertion order, so the first key is the least recent.
      this.recent.delete(sr);
      for (const [i, t] of links) {
        if (at - t > RECENT_CLICKS_MS) links.delete(i);
        else if (i !== linkIndex) (others ??= []).push({ linkIndex: i, agoMs: at - t });
      }
    } else {
      links = new Map();
    }
    links.delete(linkIndex);
    links.set(linkIndex, at);
    if (links.size > RECENT_LINKS_MAX) links.delete(links.keys().next().value!);
    this.recent.set(sr, links);
    if (this.recent.size > RECENT_CLICKS_MAX) this.recent.delete(this.recent.keys().next().value!);
    return others ?? NO_CLICKS;
  }

  private onDrop(count: number, why: 'overflow' | 'closed'): void {
    this.droppedSinceLog += count;
    const now = this.deps.clock.now();
    if (now - this.lastDropLog < DROP_LOG_EVERY_MS) return;
    this.deps.log?.warn({ dropped: this.droppedSinceLog, why, total: this.writer.stats().dropped }, 'tracking events dropped: the write queue is full');
    this.lastDropLog = now;
    this.droppedSinceLog = 0;
  }

  private async write(batch: Hit[]): Promise<void> {
    const hits: Hit[] = [];
    for (const h of batch) {
      if (h.sealed === null) {
        hits.push(h);
        continue;
      }
      const t = openToken(this.deps.key, h.sealed, 'o');
      if (t) {
        // The hit is the writer's alone now: filled in place rather than copied.
        h.sealed = null;
        h.ws = t.ws;
        h.sr = t.sr;
        hits.push(h);
      } else this.invalid++;
    }
    if (hits.length === 0) return;
    const unknown = [...new Set(hits.map((h) => h.sr))].filter((sr) => !this.sentAt.has(sr));
    // Only sends with a time are kept: one not sent yet (a preview, a race with the outbox) is asked again next batch.
    for (const [sr, at] of await sendTimes(this.deps.store.db, unknown)) {
      if (this.sentAt.size >= SENT_CACHE_MAX) this.sentAt.delete(this.sentAt.keys().next().value!);
      this.sentAt.set(sr, at);
    }
    const toRow = (h: Hit): TrackingRow => {
      const sent = this.sentAt.get(h.sr);
      const delayMs = sent === undefined ? null : h.at - sent;
      const evidence = { method: h.method, userAgent: h.userAgent, ip: h.ip, delayMs };
      const c = h.kind === 'open' ? classifyOpen(evidence) : classifyClick({ ...evidence, linkIndex: h.linkIndex ?? 0, recentOtherLinks: h.recentOtherLinks });
      return {
        workspaceId: h.ws,
        sendRequestId: h.sr,
        kind: h.kind,
        url: h.url,
        linkIndex: h.linkIndex,
        method: h.method,
        userAgent: h.userAgent,
        ip: h.ip,
        delayMs,
        verdict: c.verdict,
        confidence: c.confidence,
        reason: c.reason,
        at: h.at,
      };
    };
    const fresh = hits.filter((h) => !h.replayed);
    const replayed = hits.filter((h) => h.replayed);
    await insertTrackingEvents(this.deps.store.db, fresh.map(toRow));
    // Only clicks read back from a journal can be in the database already (a crash between their
    // batch's commit and its settle): those are written unless the same click is there.
    if (replayed.length > 0) await insertTrackingEvents(this.deps.store.db, replayed.map(toRow), { skipExisting: true });
    const journal = this.journal;
    if (journal) {
      for (const h of hits) {
        if (h.seg < 0) continue;
        journal.settle(h.seg);
        h.seg = -1; // settled once, even if a later attempt writes the batch again
      }
    }
  }
}

/** A click as its journal line: what is needed to classify and insert it later. */
function journalRecord(h: Hit): unknown {
  return { ws: h.ws, sr: h.sr, u: h.url, i: h.linkIndex, m: h.method, ua: h.userAgent, ip: h.ip, at: h.at, o: h.recentOtherLinks };
}

/** A journal line back into a click, checked as a token would be (the file is ours, but a bad line must not fail a batch); null if malformed. */
function fromJournal(r: unknown, seg: number): Hit | null {
  if (r === null || typeof r !== 'object') return null;
  const o = r as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  if (typeof o.ws !== 'string' || !UUID.test(o.ws) || typeof o.sr !== 'string' || !UUID.test(o.sr)) return null;
  if (typeof o.u !== 'string' || !Number.isSafeInteger(o.i) || typeof o.m !== 'string' || typeof o.at !== 'number' || !Number.isFinite(o.at)) return null;
  const ip = str(o.ip);
  const others = Array.isArray(o.o) ? o.o.filter((x): x is { linkIndex: number; agoMs: number } => typeof x?.linkIndex === 'number' && typeof x?.agoMs === 'number') : [];
  return { kind: 'click', sealed: null, ws: o.ws, sr: o.sr, url: o.u, linkIndex: o.i as number, method: o.m, userAgent: str(o.ua), ip: ip !== null && isIP(ip) ? ip : null, at: o.at, recentOtherLinks: others, seg, replayed: true };
}

import { sql, type RawBuilder } from 'kysely';
import type { Db, Store } from '../store/store.ts';
import { journalFacts, positiveFacts, replyTimeFacts, sendHourFacts, trackingFacts, type FactRange } from './figure-facts.ts';

/**
 * The analytics facts folded into buckets (migration 0063), so that a year's window reads a few
 * thousand rows instead of millions, and stays exact.
 *
 * Why exact at every moment: a fold adds the facts of the journal entries and tracking events with
 * ids in (folded_through, bound] and moves folded_through to bound, in one transaction; a read sums
 * the buckets of its window and counts, from the source tables, the rows with ids past
 * folded_through, in one statement (one snapshot). Every fact is thus in exactly one of the two.
 * The bound is the largest id once every writer holding the table has committed: the fold takes a
 * SHARE lock (it waits for the inserts under way and holds new ones for that instant), reads
 * max(id) and lets go, so no row with an id below the bound can appear later. Ids, not times: a
 * row's time says nothing about when it was committed (a reply received hours ago, a test's
 * history written today), and a fact's time is only where its bucket is.
 *
 * Buckets: a fact's time floored to 15 minutes (every zone's midnight falls on one, so any zone's
 * days are whole buckets) and to the hour (read for the zones whose midnights are on the hour), and,
 * for the per-email detail, to 15 minutes, UTC days and months, so that a long span reads months,
 * then days, then quarter hours at its ends (`units`). Level 'z' (migration 0126) holds the best
 * send hours' facts (figure-facts.ts sendHourFacts) in the same three widths, by the prospect's
 * local hour of the week: a reply there is counted at the time of the email it answers. Levels 'v'
 * and 'b' (migration 0128) are level 'x' summed over fewer keys, for the reads that need no more,
 * and have hours too: 'v' per sequence, step and variant (the funnel, the variants, the breakdowns
 * by sequence, step and variant), 'b' per mailbox alone (the breakdowns by mailbox and rep, and the
 * mailboxes' days): a tenth and a two-hundredth of the rows at 1M enrollments (docs/benchmarks.md).
 *
 * Compaction (migration 0127, `compactFigures`): a fold adds a row per bucket it touches, so every
 * minute's fold would add one more row to each of the day's and the month's buckets; compaction
 * merges a bucket's rows into one, whose `through` is the newest of theirs. That is exact only for a
 * read that takes the fold's position and the buckets from one snapshot (`readFolded`): a read that
 * took the position before a merge and the buckets after it would miss the merged row's older part.
 *
 * What a fold keeps that the source may lose: the counts of journal rows and tracking events later
 * purged by retention or erased with a person stay in the buckets (they are counts, not personal
 * data: docs/privacy.md). Positive replies (an enrollment's first interested reply) are a third
 * source (migration 0131): a person may relabel a reply, so the messages cannot be folded as they
 * are; a trigger on them appends -1 and +1 facts whenever an enrollment's first interested reply
 * moves (`positive_fact`), and those fold by id like the journal.
 *
 * Reply times (migration 0135) are a fourth source over the journal, folded into rows of their own
 * (`reply_time`, one per reply: a duration, not a count, so no bucket can hold it) with their own
 * position, so that the upgrade folded them from the journal's start without refolding the
 * buckets. They are not compacted: there is nothing to merge.
 */

export type Level = 'w' | 's' | 'x' | 'v' | 'b';
/** The levels with UTC days and months (read over a span by `units`), and those with hours (read per day of a zone). */
const SPANNED = new Set<Level>(['x', 'v', 'b']);
const HOURLY = new Set<Level>(['w', 's', 'v', 'b']);
type Width = 'q' | 'h' | 'd' | 'm';

const QUARTER = 15 * 60_000;
const HOUR = 60 * 60_000;
const EPOCH = new Date(Date.UTC(2000, 0, 1));

/** How far each source was folded when a read began (`foldPosition`). */
export interface FoldPosition {
  journal: bigint;
  tracking: bigint;
  positive: bigint;
  replyTime: bigint;
}

/**
 * The rollup's sources, each folded by id from its table: `write` adds the facts of a range (the
 * source's rows with ids in (after, upTo]) to the rollup, in the fold's transaction.
 */
type Write = (tx: Db, r: FactRange, upTo: bigint) => Promise<unknown>;
const SOURCES: ReadonlyArray<{ source: 'journal' | 'tracking' | 'positive' | 'reply_time'; table: string; write: Write }> = [
  {
    source: 'journal',
    table: 'event',
    write: async (tx, r, upTo) => {
      await insertBuckets(journalFacts(r), 'journal', upTo).execute(tx);
      await insertSendHourBuckets(sendHourFacts(r), upTo).execute(tx);
    },
  },
  { source: 'tracking', table: 'tracking_event', write: (tx, r, upTo) => insertBuckets(trackingFacts(r, false), 'tracking', upTo).execute(tx) },
  { source: 'positive', table: 'positive_fact', write: (tx, r, upTo) => insertBuckets(positiveFacts(r), 'positive', upTo).execute(tx) },
  { source: 'reply_time', table: 'event', write: (tx, r) => insertReplyTimes(replyTimeFacts(r)).execute(tx) },
];
type Source = (typeof SOURCES)[number]['source'];
/** The sources whose facts are counts in figure_bucket (compacted); the others keep rows of their own. */
const BUCKETED = new Set<Source>(['journal', 'tracking', 'positive']);

/**
 * The fold's position, read before the figures: the read then takes the buckets of folds up to it
 * and the source rows past it, so a fold that commits in between is counted once, and the planner
 * sees the bound as a value (a handful of rows past it, not a third of the table).
 */
export async function foldPosition(db: Db): Promise<FoldPosition> {
  const r = await sql<{ source: Source; at: string }>`select source, folded_through::text as at from figure_fold`.execute(db);
  const at = (s: Source) => BigInt(r.rows.find((x) => x.source === s)?.at ?? '0');
  return { journal: at('journal'), tracking: at('tracking'), positive: at('positive'), replyTime: at('reply_time') };
}

/**
 * Runs `read` with the fold's position on one snapshot (REPEATABLE READ, read only), so a compaction
 * that commits in between is seen whole or not at all (file comment). Inside a caller's transaction
 * (a test reading the source alone), the caller's: it holds no compaction off, so it is for reads
 * that want no such guarantee.
 */
export async function readFolded<T>(db: Db, read: (db: Db, fold: FoldPosition) => Promise<T>): Promise<T> {
  if (db.isTransaction) return read(db, await foldPosition(db));
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (tx) => {
      await sql`set transaction read only`.execute(tx);
      return read(tx, await foldPosition(tx));
    });
}

function isQuarter(d: Date): boolean {
  return d.getTime() % QUARTER === 0;
}

/**
 * A span cut into bucket ranges: quarter hours up to the first UTC midnight, days up to the first
 * month, months, then days and quarter hours to the end. Both ends must fall on quarter hours.
 * `hours` (a level that has them): the quarter hours only up to the first whole hour and from the
 * last, hours between, so a zone's day that begins at 05:00 UTC reads 24 rows per key, not 96.
 */
export function units(since: Date, until: Date, o: { hours?: boolean } = {}): Array<{ width: Width; from: Date; to: Date }> {
  const a = since.getTime();
  const b = until.getTime();
  const ceilDay = (t: number) => Math.ceil(t / 86_400_000) * 86_400_000;
  const floorDay = (t: number) => Math.floor(t / 86_400_000) * 86_400_000;
  const monthOf = (t: number, up: boolean) => {
    const d = new Date(t);
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    return up && start < t ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) : start;
  };
  const out: Array<{ width: Width; from: Date; to: Date }> = [];
  const push = (width: Width, from: number, to: number) => {
    if (from >= to) return;
    if (width === 'q' && o.hours) {
      const h1 = Math.ceil(from / HOUR) * HOUR;
      const h2 = Math.floor(to / HOUR) * HOUR;
      if (h1 < h2) {
        push('q', from, h1);
        out.push({ width: 'h', from: new Date(h1), to: new Date(h2) });
        push('q', h2, to);
        return;
      }
    }
    out.push({ width, from: new Date(from), to: new Date(to) });
  };
  const dA = ceilDay(a);
  const dB = floorDay(b);
  if (dA >= dB) {
    push('q', a, b);
    return out;
  }
  const mA = monthOf(dA, true);
  const mB = monthOf(dB, false);
  push('q', a, dA);
  if (mA >= mB) push('d', dA, dB);
  else {
    push('d', dA, mA);
    push('m', mA, mB);
    push('d', mB, dB);
  }
  push('q', dB, b);
  return out;
}

/**
 * Every fact of the workspace in [since, until), as rows (at, sequence_id, step_id, variant_id,
 * mailbox_id, series, n): the folded buckets of `level` (their start standing for `at`) and the
 * rows past the fold. Level 'w' and 's' hold quarter hours and hours (they are read per day of a zone);
 * 'x' holds every fact by the email it is credited to, 'v' and 'b' the same with fewer keys (`perDay`: read in
 * hours or quarter hours, to be counted per day of a zone). `sequenceId` keeps the buckets of one sequence
 * (every level but 'w' and 'b'; the caller filters the rows past the fold). A span whose ends are not on quarter hours
 * is read from the source tables alone.
 */
export function windowFacts(fold: FoldPosition, workspaceId: string, since: Date, until: Date, level: Level, sequenceId?: string, o: { perDay?: boolean } = {}): RawBuilder<unknown> {
  const of = (facts: RawBuilder<unknown>) => sql`select at, sequence_id, step_id, variant_id, mailbox_id, series, n from (${facts}) f`;
  if (!isQuarter(since) || !isQuarter(until)) {
    const all: FactRange = { workspaceId, after: 0n, upTo: null, since, until };
    return sql`${of(journalFacts(all))} union all ${of(trackingFacts(all, true))} union all ${of(positiveFacts(all))}`;
  }
  const tail: FactRange = { workspaceId, after: fold.journal, upTo: null, since, until };
  // Per day of a zone: whole hours where the zone's midnights are on the hour (most zones), a
  // quarter of the rows; quarter hours for the zones at :30 and :45.
  const dayWidth: Width = since.getTime() % HOUR === 0 && until.getTime() % HOUR === 0 ? 'h' : 'q';
  // A span's total: UTC months and days where the level has them. Per day of a zone: the widths
  // whose buckets never straddle the zone's midnight.
  if (sequenceId && (level === 'w' || level === 'b')) throw new Error(`figure level ${level} holds no sequence`);
  const ranges = SPANNED.has(level) && !o.perDay ? units(since, until, { hours: HOURLY.has(level) }) : [{ width: HOURLY.has(level) ? dayWidth : ('q' as Width), from: since, to: until }];
  const inUnits = sql.join(ranges.map((u) => sql`(b.width = ${u.width} and b.bucket >= ${u.from} and b.bucket < ${u.to})`), sql` or `);
  return sql`
    select b.bucket as at, b.sequence_id, b.step_id, b.variant_id, b.mailbox_id, b.series, b.n
    from figure_bucket b
    where b.workspace_id = ${workspaceId} and b.level = ${level} and (${inUnits}) ${sequenceId ? sql`and b.sequence_id = ${sequenceId}` : sql``}
      and b.through <= (case b.source when 'journal' then ${fold.journal.toString()}::bigint when 'tracking' then ${fold.tracking.toString()}::bigint else ${fold.positive.toString()}::bigint end)
    union all ${of(journalFacts(tail))}
    union all ${of(trackingFacts({ ...tail, after: fold.tracking }, false))}
    union all ${of(positiveFacts({ ...tail, after: fold.positive }))}`;
}

/** Ids folded per transaction: a backlog (the first fold of a large journal) is folded in steps. */
const CHUNK = 250_000n;

export type FoldResult = Record<Source, { from: bigint; to: bigint }>;

/**
 * Folds every committed journal entry and tracking event past the last fold (file comment). Safe
 * to run from several processes at once: each step locks its source's fold row, and one that finds
 * it moved on folds only what is left.
 */
export async function foldFigures(store: Store, o: { stopping?: () => boolean } = {}): Promise<FoldResult> {
  const stopping = o.stopping ?? (() => false);
  const out = {} as FoldResult;
  for (const s of SOURCES) out[s.source] = await foldSource(store, s.source, s.table, s.write, stopping);
  return out;
}

/** `stopping`: asked between steps, so a process shutting down leaves a long backlog to the next fold. */
async function foldSource(store: Store, source: Source, table: string, write: Write, stopping: () => boolean) {
  const bound = await store.db.transaction().execute(async (tx) => {
    // A writer holds ROW EXCLUSIVE from its insert to its commit: SHARE waits for those under way
    // and holds new ones back for as long as it takes to read max(id). Given up after 5 s (a
    // long writer): the next fold tries again, and reads stay exact meanwhile.
    await sql`set local lock_timeout = '5s'`.execute(tx);
    await sql.raw(`lock table ${table} in share mode`).execute(tx);
    const r = await sql<{ id: string | null }>`select max(id)::text as id from ${sql.table(table)}`.execute(tx);
    return BigInt(r.rows[0]?.id ?? '0');
  });
  let from: bigint | undefined;
  let to = 0n;
  for (;;) {
    const step = await store.db.transaction().execute(async (tx) => {
      const r = await sql<{ at: string }>`select folded_through::text as at from figure_fold where source = ${source} for update`.execute(tx);
      const after = BigInt(r.rows[0]!.at);
      if (after >= bound) return { after, upTo: after };
      const upTo = after + CHUNK < bound ? after + CHUNK : bound;
      const range: FactRange = { workspaceId: null, after, upTo, since: new Date(0), until: new Date(Date.UTC(9999, 11, 31)) };
      await write(tx, range, upTo);
      await sql`update figure_fold set folded_through = ${upTo.toString()}::bigint where source = ${source}`.execute(tx);
      return { after, upTo };
    });
    from ??= step.after;
    to = step.upTo;
    if (step.upTo >= bound || stopping()) break;
  }
  return { from: from ?? 0n, to };
}

/** The bucket of fact row `f` in a width: its time floored to 15 minutes, the hour, or the UTC day or month. */
function bucketOf(width: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`case ${width} when 'q' then date_bin('15 minutes', f.at, ${EPOCH}::timestamptz) when 'h' then date_trunc('hour', f.at, 'UTC')
    when 'd' then date_trunc('day', f.at, 'UTC') else date_trunc('month', f.at, 'UTC') end`;
}

/** The facts' counts per bucket, for each level and width (migration 0063 says which hold what). */
function insertBuckets(facts: RawBuilder<unknown>, source: Source, through: bigint): RawBuilder<unknown> {
  return sql`
    with f as materialized (${facts}), b as (
      select f.workspace_id, 'w' as level, w.width, ${bucketOf(sql`w.width`)} as bucket, f.series,
        null::uuid as sequence_id, null::uuid as step_id, null::uuid as variant_id, null::uuid as mailbox_id, sum(f.n)::int as n
      from f cross join (values ('q'), ('h')) as w(width) group by 1, 3, 4, 5
      union all
      select f.workspace_id, 's', w.width, ${bucketOf(sql`w.width`)}, f.series, f.sequence_id, null, null, null, sum(f.n)::int
      from f cross join (values ('q'), ('h')) as w(width) where f.sequence_id is not null group by 1, 3, 4, 5, 6
      union all
      select f.workspace_id, 'x', w.width,
        ${bucketOf(sql`w.width`)},
        f.series, f.sequence_id, f.step_id, f.variant_id, f.mailbox_id, sum(f.n)::int
      from f cross join (values ('q'), ('d'), ('m')) as w(width)
      group by 1, 3, 4, 5, 6, 7, 8, 9
      union all
      select f.workspace_id, 'v', w.width, ${bucketOf(sql`w.width`)}, f.series, f.sequence_id, f.step_id, f.variant_id, null, sum(f.n)::int
      from f cross join (values ('q'), ('h'), ('d'), ('m')) as w(width)
      group by 1, 3, 4, 5, 6, 7, 8
      union all
      select f.workspace_id, 'b', w.width, ${bucketOf(sql`w.width`)}, f.series, null, null, null, f.mailbox_id, sum(f.n)::int
      from f cross join (values ('q'), ('h'), ('d'), ('m')) as w(width)
      group by 1, 3, 4, 5, 9
    )
    insert into figure_bucket (workspace_id, level, width, bucket, series, sequence_id, step_id, variant_id, mailbox_id, n, source, through)
    select workspace_id, level, width, bucket, series, sequence_id, step_id, variant_id, mailbox_id, n, ${source}, ${through.toString()}::bigint from b where n <> 0`;
}

/** The send-hour facts' counts (level 'z') per quarter hour, UTC day and month, as level 'x' keeps them. */
function insertSendHourBuckets(facts: RawBuilder<unknown>, through: bigint): RawBuilder<unknown> {
  return sql`
    with f as materialized (${facts}), b as (
      select f.workspace_id, w.width,
        ${bucketOf(sql`w.width`)} as bucket,
        f.series, f.sequence_id, f.local_hour, sum(f.n)::int as n
      from f cross join (values ('q'), ('d'), ('m')) as w(width)
      group by 1, 2, 3, 4, 5, 6
    )
    insert into figure_bucket (workspace_id, level, width, bucket, series, sequence_id, local_hour, n, source, through)
    select workspace_id, 'z', width, bucket, series, sequence_id, local_hour, n, 'journal', ${through.toString()}::bigint from b where n <> 0`;
}

/** The reply-time facts' rows (figure-facts.ts replyTimeFacts), one per reply, into `reply_time`. */
function insertReplyTimes(facts: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`insert into reply_time (event_id, workspace_id, at, sent_at, sequence_id)
    select event_id, workspace_id, at, sent_at, sequence_id from (${facts}) f`;
}

/**
 * The send-hour facts of the workspace whose email went out in [since, until), as rows (at,
 * sequence_id, local_hour, series, n): the folded buckets of level 'z' (whole UTC days and months
 * where they fit, quarter hours at the ends, `units`) and the journal rows past the fold. A span
 * whose ends are not on quarter hours is read from the journal alone.
 */
export function sendHourWindow(fold: FoldPosition, workspaceId: string, since: Date, until: Date, sequenceId?: string): RawBuilder<unknown> {
  const of = (r: FactRange) => sql`select at, sequence_id, local_hour, series, n from (${sendHourFacts(r)}) f ${sequenceId ? sql`where f.sequence_id = ${sequenceId}` : sql``}`;
  if (!isQuarter(since) || !isQuarter(until)) return of({ workspaceId, after: 0n, upTo: null, since, until });
  const inUnits = sql.join(units(since, until).map((u) => sql`(b.width = ${u.width} and b.bucket >= ${u.from} and b.bucket < ${u.to})`), sql` or `);
  return sql`
    select b.bucket as at, b.sequence_id, b.local_hour, b.series, b.n
    from figure_bucket b
    where b.workspace_id = ${workspaceId} and b.level = 'z' and (${inUnits}) ${sequenceId ? sql`and b.sequence_id = ${sequenceId}` : sql``}
      and b.through <= ${fold.journal.toString()}::bigint
    union all ${of({ workspaceId, after: fold.journal, upTo: null, since, until })}`;
}

/** Places (workspace, level, width, bucket) past which a compaction hashes rather than probes (compactFigures). */
const MANY_PLACES = 5_000;

/** The columns that say which bucket a row counts in: rows equal in all of them are merged. */
const GROUP = ['workspace_id', 'level', 'width', 'bucket', 'series', 'sequence_id', 'step_id', 'variant_id', 'mailbox_id', 'local_hour'] as const;

export interface CompactResult {
  /** Rows merged away and the rows that replaced them. */
  removed: number;
  written: number;
}

/**
 * Merges the rows of every bucket touched since the last compaction into one (file comment), for
 * each source. Holds the fold rows for its length, so no fold adds rows meanwhile; a read on an
 * older snapshot keeps the rows it began with (readFolded). Safe from several processes at once:
 * the second waits, then finds nothing new.
 */
export async function compactFigures(store: Store): Promise<CompactResult> {
  return store.db.transaction().execute(async (tx) => {
    const fold = await sql<{ source: Source; folded: string; compacted: string }>`
      select source, folded_through::text as folded, compacted_through::text as compacted from figure_fold order by source for update`.execute(tx);
    const out: CompactResult = { removed: 0, written: 0 };
    const cols = sql.join(GROUP.map((c) => sql.ref(c)));
    // The bucket's place (workspace, level, width, time) is what the index leads with; the rest of
    // its key is compared by grouping, which takes nulls as equal (a join on them would not).
    await sql`set local work_mem = '256MB'`.execute(tx);
    for (const f of fold.rows) {
      if (!BUCKETED.has(f.source) || BigInt(f.folded) <= BigInt(f.compacted)) continue;
      // Many places touched (a source's first compaction, after an upgrade or a long pause): the rows
      // the folds just wrote have no statistics yet, and the planner, taking them for a handful,
      // probes each place's rows of every source in a nested loop: 17 minutes for the 200,000
      // places of the positive replies' first compaction at 1M enrollments (docs/benchmarks.md).
      // Reading the source's rows by its index and hashing the places took 2.6 s. A few places (the
      // compaction every ten minutes) keep the probes, which read only those places.
      const places = await sql<{ n: number }>`
        select count(*)::int as n from (select distinct workspace_id, level, width, bucket from figure_bucket where source = ${f.source} and through > ${f.compacted}::bigint) t`.execute(tx);
      await sql.raw(`set local enable_nestloop = ${Number(places.rows[0]!.n) > MANY_PLACES ? 'off' : 'on'}`).execute(tx);
      // The places the folds since the last compaction added to; their rows, numbered by bucket;
      // the rows of the buckets with more than one, replaced by their sum.
      const r = await sql<{ removed: number; written: number }>`
        with touched as (
          select distinct workspace_id, level, width, bucket from figure_bucket where source = ${f.source} and through > ${f.compacted}::bigint
        ), candidates as (
          select b.ctid as row, count(*) over (partition by ${sql.join(GROUP.map((c) => sql.ref(`b.${c}`)))}) as rows
          from figure_bucket b join touched t on b.workspace_id = t.workspace_id and b.level = t.level and b.width = t.width and b.bucket = t.bucket
          where b.source = ${f.source}
        ), gone as (
          delete from figure_bucket b using candidates c where c.rows > 1 and b.ctid = c.row
          returning b.*
        ), put as (
          insert into figure_bucket (${cols}, n, source, through)
          select ${cols}, sum(n)::int, ${f.source}, max(through) from gone group by ${cols} having sum(n) <> 0
          returning 1
        )
        select (select count(*) from gone)::int as removed, (select count(*) from put)::int as written`.execute(tx);
      out.removed += Number(r.rows[0]!.removed);
      out.written += Number(r.rows[0]!.written);
      await sql`update figure_fold set compacted_through = folded_through where source = ${f.source}`.execute(tx);
    }
    return out;
  });
}

/** Folded rows and the fold's position, for `cadenza status` and the benchmark. */
export async function foldState(db: Db): Promise<FoldPosition & { buckets: number }> {
  const r = await sql<{ buckets: number }>`select count(*)::int as buckets from figure_bucket`.execute(db);
  return { buckets: Number(r.rows[0]!.buckets), ...(await foldPosition(db)) };
}

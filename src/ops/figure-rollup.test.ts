import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { newId } from '../common/ids.ts';
import { seededRandom, type Random } from '../common/random.ts';
import type { Db } from '../store/store.ts';
import { compactFigures, foldFigures, foldPosition, foldState, readFolded, units, windowFacts } from './figure-rollup.ts';
import { ALL_TIME, BREAKDOWN_BY, breakdown, calendarWindow, perDay, perStep, type Window } from './figures.ts';
import { mailboxDays } from './figures-mailbox-days.ts';
import { replyTimes } from './figures-reply-time.ts';
import { readFileSync } from 'node:fs';

const DAY = 86_400_000;
const Q = 15 * 60_000;

describe('units: a span cut into quarter hours, days and months', () => {
  const d = (s: string) => new Date(s);
  it('keeps a span inside one day in quarter hours', () => {
    expect(units(d('2036-03-09T05:00:00Z'), d('2036-03-09T20:15:00Z'))).toEqual([{ width: 'q', from: d('2036-03-09T05:00:00Z'), to: d('2036-03-09T20:15:00Z') }]);
  });
  it('reads whole UTC days and months where it can, quarter hours only at the ends', () => {
    expect(units(d('2036-01-30T05:30:00Z'), d('2036-04-02T04:45:00Z'))).toEqual([
      { width: 'q', from: d('2036-01-30T05:30:00Z'), to: d('2036-01-31T00:00:00Z') },
      { width: 'd', from: d('2036-01-31T00:00:00Z'), to: d('2036-02-01T00:00:00Z') },
      { width: 'm', from: d('2036-02-01T00:00:00Z'), to: d('2036-04-01T00:00:00Z') },
      { width: 'd', from: d('2036-04-01T00:00:00Z'), to: d('2036-04-02T00:00:00Z') },
      { width: 'q', from: d('2036-04-02T00:00:00Z'), to: d('2036-04-02T04:45:00Z') },
    ]);
  });
  it('covers the span exactly, without overlap, for any quarter-hour ends', () => {
    const r = seededRandom('units');
    for (let i = 0; i < 500; i++) {
      const a = Date.UTC(2030, 0, 1) + r.int(0, 3 * 366 * 96) * Q;
      const b = a + r.int(0, (r.int(0, 1) ? 3 : 400) * 96) * Q;
      for (const hours of [false, true]) {
        const u = units(new Date(a), new Date(b), { hours });
        let at = a;
        for (const x of u) {
          expect(x.from.getTime()).toBe(at);
          expect(x.to.getTime()).toBeGreaterThan(at);
          // Hours only where asked, and whole; quarter hours then under two hours at each end.
          if (x.width === 'h') expect(hours && x.from.getTime() % 3_600_000 === 0 && x.to.getTime() % 3_600_000 === 0).toBe(true);
          if (x.width === 'q' && hours) expect(x.to.getTime() - x.from.getTime()).toBeLessThan(2 * 3_600_000);
          at = x.to.getTime();
        }
        expect(at).toBe(a === b ? a : b);
      }
    }
  });
});

/**
 * The rollup is exact at every moment: figures read from the folded buckets plus the rows past the
 * fold equal those read from the source rows alone (the same definitions, ops/figure-facts.ts),
 * whatever the order rows arrive in (times out of order, a late open earlier than the one counted),
 * whenever folds run between them, in zones with half- and quarter-hour offsets and across the
 * daylight-saving changes of March 2036.
 */
describe.each(testBackends())('the analytics rollup (%s)', (backend) => {
  let store: TestStore;
  const random = seededRandom(`rollup-${backend}`);
  const id = () => newId(Date.UTC(2036, 0, 1), random);
  const ws = id();
  const other = id();
  const seqs: string[] = [];
  const steps: Array<{ id: string; seq: string; email: boolean; variants: string[] }> = [];
  const mailboxes = [id(), id(), id()];
  const enrollments: Array<{ id: string; seq: string; ws: string; sends: string[] }> = [];
  const base = Date.UTC(2036, 2, 1);

  beforeAll(async () => {
    store = await freshStore(backend);
    for (const w of [ws, other]) await store.db.insertInto('workspace').values({ id: w, name: w === ws ? 'Rollup' : 'Other' }).execute();
    for (const [i, m] of mailboxes.entries()) await store.db.insertInto('mailbox').values({ id: m, workspace_id: ws, email: `rep${i}@rollup.test`, provider: 'smtp_imap' }).execute();
    for (let s = 0; s < 3; s++) {
      const sid = id();
      seqs.push(sid);
      await store.db.insertInto('sequence').values({ id: sid, workspace_id: s === 2 ? other : ws, key: `s${s}`, name: `Sequence ${s}`, send_window: JSON.stringify({ kind: 'any' }) }).execute();
      for (let k = 0; k < 3; k++) {
        const stid = id();
        const email = k !== 1;
        const variants: string[] = [];
        await store.db.insertInto('step').values({ id: stid, sequence_id: sid, key: `k${k}`, position: k + 1, kind: email ? 'email' : 'call' }).execute();
        if (email) {
          for (const key of k === 0 ? ['a', 'b'] : ['a']) {
            const vid = id();
            variants.push(vid);
            await store.db.insertInto('variant').values({ id: vid, step_id: stid, key, subject: 'Hi', body: 'Hello', weight: 1 }).execute();
          }
        }
        steps.push({ id: stid, seq: sid, email, variants });
      }
    }
  });
  afterAll(() => store?.destroy());

  /** Some enrollments, each with send requests for its sequence's email steps. */
  async function enroll(n: number) {
    for (let i = 0; i < n; i++) {
      const seq = seqs[random.int(0, seqs.length - 1)]!;
      const w = seq === seqs[2] ? other : ws;
      const leadId = id();
      await store.db.insertInto('lead').values({ id: leadId, workspace_id: w, email: `${leadId}@p.test`, email_norm: `${leadId}@p.test` }).execute();
      const eid = id();
      await sql`insert into enrollment (id, workspace_id, sequence_id, lead_id, state, time_zone, zone_source) values (${eid}, ${w}, ${seq}, ${leadId}, 'active', 'UTC', 'workspace')`.execute(store.db);
      const sends: string[] = [];
      for (const st of steps.filter((s) => s.seq === seq && s.email)) {
        const rid = id();
        sends.push(rid);
        await store.db
          .insertInto('send_request')
          .values({ id: rid, workspace_id: w, enrollment_id: eid, step_id: st.id, mailbox_id: w === ws ? mailboxes[random.int(0, 2)]! : null, variant_id: st.variants[random.int(0, st.variants.length - 1)]!, state: 'sent', due_at: new Date(base) })
          .execute();
      }
      enrollments.push({ id: eid, seq, ws: w, sends });
    }
  }

  /** A random time in the month, on no particular boundary; late rows land anywhere in it. */
  const someTime = (r: Random) => new Date(base + r.int(0, 30 * DAY));

  /**
   * n random journal entries and tracking events. An enrollment's journal goes forward in time, as
   * the engine writes it (under the enrollment's row lock, stamped with the clock's now), the
   * enrollments' journals interleaved; tracking events come at any time of the month, the late
   * ones included.
   */
  const journalAt = new Map<string, number>();
  async function write(n: number) {
    for (let i = 0; i < n; i++) {
      const e = enrollments[random.int(0, enrollments.length - 1)]!;
      const roll = random.int(0, 99);
      if (roll < 55) {
        const at = new Date(Math.min(base + 30 * DAY - 1, (journalAt.get(e.id) ?? base + random.int(0, 5 * DAY)) + random.int(0, 2 * DAY)));
        journalAt.set(e.id, at.getTime());
        const kind = random.int(0, 3);
        const st = steps.filter((s) => s.seq === e.seq)[random.int(0, 2)]!;
        const [type, event] =
          kind === 0
            ? ['step_sent', { type: 'step_sent', stepId: st.id }]
            : kind === 1
              ? [random.int(0, 4) === 0 ? 'reply.ignored' : 'reply', { type: 'reply' }]
              : kind === 2
                ? [random.int(0, 1) ? 'bounce' : 'unsubscribe', { type: 'bounce', hard: true }]
                : ['call_outcome', { type: 'call_outcome', stepId: st.id, outcome: random.int(0, 1) ? 'meeting_booked' : 'no_answer' }];
        await sql`insert into event (workspace_id, enrollment_id, type, payload, at) values (${e.ws}, ${e.id}, ${type}, ${JSON.stringify({ event })}::jsonb, ${at})`.execute(store.db);
      } else {
        const at = someTime(random);
        const kind = (['open', 'open', 'click', 'unsubscribe'] as const)[random.int(0, 3)];
        const verdict = (['human', 'proxy', 'scanner', 'unknown'] as const)[random.int(0, 3)];
        const send = e.sends[random.int(0, e.sends.length - 1)] ?? null;
        await sql`insert into tracking_event (workspace_id, send_request_id, enrollment_id, kind, verdict, at) values (${e.ws}, ${send}, ${random.int(0, 9) === 0 ? null : e.id}, ${kind}, ${verdict}, ${at})`.execute(store.db);
      }
    }
  }

  /**
   * n changes to the prospects' replies, as the pipeline and people make them: a reply stored
   * (interested or not), relabelled, threaded to another enrollment, or deleted. Each moves an
   * enrollment's first interested reply or not (migration 0131's trigger writes the positive-reply
   * facts). A reply is received after what its enrollment's journal holds, and the journal goes on
   * after it, as the engine's clock writes it: an email journalled later is sent later, so the email
   * a fact is credited to at its fold is the one it is credited to ever after.
   */
  const replies: Array<{ id: string; ws: string; at: number }> = [];
  const after = (enrollmentId: string, at: number) => journalAt.set(enrollmentId, Math.max(journalAt.get(enrollmentId) ?? 0, at));
  async function writeReplies(n: number) {
    for (let i = 0; i < n; i++) {
      const roll = random.int(0, 9);
      const m = replies.length > 0 ? replies[random.int(0, replies.length - 1)]! : undefined;
      if (!m || roll < 5) {
        const e = enrollments[random.int(0, enrollments.length - 1)]!;
        const mid = id();
        const at = new Date(Math.min(base + 30 * DAY - 4_000_000, (journalAt.get(e.id) ?? base + random.int(0, 5 * DAY)) + random.int(0, 2 * DAY)));
        const received = random.int(0, 3) === 0 ? null : new Date(at.getTime() + random.int(0, 3_600_000));
        await sql`insert into message (id, workspace_id, enrollment_id, direction, message_id, at, received_at, intent)
          values (${mid}, ${e.ws}, ${e.id}, 'inbound', ${`<${mid}@p.test>`}, ${at}, ${received}, ${random.int(0, 2) ? 'interested' : 'not_interested'})`.execute(store.db);
        replies.push({ id: mid, ws: e.ws, at: (received ?? at).getTime() });
        after(e.id, (received ?? at).getTime());
      } else if (roll < 8) {
        await sql`update message set intent = case when intent = 'interested' then 'not_now' else 'interested' end where id = ${m.id}`.execute(store.db);
      } else if (roll < 9) {
        const e = enrollments.filter((x) => x.ws === m.ws)[random.int(0, enrollments.filter((x) => x.ws === m.ws).length - 1)]!;
        await sql`update message set enrollment_id = ${e.id} where id = ${m.id}`.execute(store.db);
        after(e.id, m.at);
      } else {
        await sql`delete from message where id = ${m.id}`.execute(store.db);
        replies.splice(replies.indexOf(m), 1);
      }
    }
  }

  const windows = (): Window[] =>
    ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe'].flatMap((zone) => [
      calendarWindow(base + 29 * DAY, 30, zone),
      calendarWindow(base + random.int(3, 25) * DAY, random.int(1, 9), zone),
    ]);

  /** The figures read from the source rows alone: the fold undone inside a transaction rolled back. */
  async function fromSource<T>(read: (db: Db) => Promise<T>): Promise<T> {
    let out: T | undefined;
    await store.db
      .transaction()
      .execute(async (tx) => {
        await sql`delete from figure_bucket`.execute(tx);
        await sql`delete from reply_time`.execute(tx);
        await sql`update figure_fold set folded_through = 0`.execute(tx);
        out = await read(tx);
        throw new Error('rolled back');
      })
      .catch((e: unknown) => {
        if ((e as Error).message !== 'rolled back') throw e;
      });
    return out!;
  }

  async function agree() {
    for (const w of windows()) {
      for (const o of [{}, { sequenceId: seqs[0]! }, { sequenceId: seqs[1]! }]) {
        const folded = await perDay(store.db, ws, w, o);
        expect(folded).toEqual(await fromSource((db) => perDay(db, ws, w, o)));
      }
      for (const o of [{}, { sequenceId: seqs[1]! }]) {
        const folded = await perStep(store.db, ws, w, o);
        expect(folded).toEqual(await fromSource((db) => perStep(db, ws, w, o)));
      }
    }
    // Reply times (their own rows, migration 0135): the month in two zones and a random span, with
    // and without a sequence.
    for (const w of [windows()[0]!, windows()[3]!, windows()[7]!]) {
      for (const o of [{}, { sequenceId: seqs[0]! }, { sequenceId: seqs[1]! }]) {
        expect(await replyTimes(store.db, ws, w, o)).toEqual(await fromSource((db) => replyTimes(db, ws, w, o)));
      }
    }
    expect(await perStep(store.db, ws, ALL_TIME)).toEqual(await fromSource((db) => perStep(db, ws, ALL_TIME)));
    expect(await perStep(store.db, ws, ALL_TIME, { perMailbox: true })).toEqual(await fromSource((db) => perStep(db, ws, ALL_TIME, { perMailbox: true })));
    const w = windows()[3]!;
    for (const by of BREAKDOWN_BY) expect(await breakdown(store.db, ws, w, by)).toEqual(await fromSource((db) => breakdown(db, ws, w, by)));
  }

  /** The reads of the levels with fewer keys in their other cases (a few times only: each read of the source alone takes seconds). */
  async function agreeOnLevels() {
    const w = windows()[3]!;
    for (const by of ['mailbox', 'rep'] as const) {
      expect(await breakdown(store.db, ws, w, by, { sequenceId: seqs[0]! })).toEqual(await fromSource((db) => breakdown(db, ws, w, by, { sequenceId: seqs[0]! })));
    }
    // The mailboxes' days: hours in most zones, quarter hours in Kathmandu's (+5:45).
    for (const m of [windows()[0]!, windows()[8]!]) expect(await mailboxDays(store.db, ws, m)).toEqual(await fromSource((db) => mailboxDays(db, ws, m)));
  }

  it('agrees with the source rows before any fold, after folds, and with rows past the fold', async () => {
    await enroll(40);
    await write(400);
    await agree();
    const first = await foldFigures(store);
    expect(first.journal.to).toBeGreaterThan(0n);
    expect(first.tracking.to).toBeGreaterThan(0n);
    // Every reply folded into a reply-time row, most of them after an email.
    const rt = await sql<{ rows: number; timed: number; replies: number }>`
      select (select count(*) from reply_time)::int as rows, (select count(*) from reply_time where sent_at is not null)::int as timed,
        (select count(*) from event where type = 'reply')::int as replies`.execute(store.db);
    expect(rt.rows[0]!.rows).toBe(rt.rows[0]!.replies);
    expect(rt.rows[0]!.timed).toBeGreaterThan(0);
    await agree();
    const sums = await perDay(store.db, ws, calendarWindow(base + 29 * DAY, 30, 'UTC'));
    expect(sums.reduce((n, d) => n + d.sends + d.opened + d.clicked + d.replies, 0)).toBeGreaterThan(50);
    // Rows past the fold, some of them earlier than rows already folded (a late open moves its
    // email's first open earlier: -1 where it was, +1 at the new time).
    for (let round = 0; round < 4; round++) {
      await write(random.int(20, 150));
      await writeReplies(random.int(10, 40));
      await agree();
      if (random.int(0, 2) > 0) await foldFigures(store);
      await agree();
    }
    const s = await foldState(store.db);
    expect(s.buckets).toBeGreaterThan(0);
    // The late opens did move a first earlier: the fold took one back where it had been.
    const moved = await sql<{ n: number }>`select count(*)::int as n from figure_bucket where n < 0`.execute(store.db);
    expect(moved.rows[0]!.n).toBeGreaterThan(0);
    await agreeOnLevels();
    // Ten comparisons of every figure in twelve windows, each read twice: 10 to 40 s alone, and
    // past a minute on CI's two cores under the suite's load.
  }, 240_000);

  it('counts positive replies as the messages say through relabels, moves and deletions: each enrollment once, at its first interested reply', async () => {
    /** The definition read from the messages themselves: per day of `w`, enrollments whose first interested reply falls on it. */
    const fromMessages = async (w: Window) => {
      const r = await sql<{ first_at: Date }>`
        select min(coalesce(received_at, at)) as first_at from message
        where workspace_id = ${ws} and direction = 'inbound' and intent = 'interested' and enrollment_id is not null
        group by enrollment_id`.execute(store.db);
      const day = new Intl.DateTimeFormat('en-CA', { timeZone: w.zone, year: 'numeric', month: '2-digit', day: '2-digit' });
      const out = new Map<string, number>();
      for (const x of r.rows) {
        const t = new Date(x.first_at);
        if (t >= w.since && t < w.until) out.set(day.format(t), (out.get(day.format(t)) ?? 0) + 1);
      }
      return w.dayKeys.map((d) => out.get(d) ?? 0);
    };
    const check = async () => {
      for (const w of windows()) expect((await perDay(store.db, ws, w)).map((d) => d.positiveReplies)).toEqual(await fromMessages(w));
      const w = windows()[0]!;
      const total = (await fromMessages(w)).reduce((a, b) => a + b, 0);
      for (const by of BREAKDOWN_BY) expect((await breakdown(store.db, ws, w, by)).reduce((n, r) => n + r.positiveReplies, 0)).toBe(total);
    };
    for (let round = 0; round < 5; round++) {
      await writeReplies(random.int(20, 60));
      await check();
      await foldFigures(store);
      await check();
      if (round % 2 === 1) {
        await compactFigures(store);
        await check();
      }
    }
    // The relabels did take counts back.
    const back = await sql<{ n: number }>`select count(*)::int as n from positive_fact where n < 0`.execute(store.db);
    expect(back.rows[0]!.n).toBeGreaterThan(0);
    const counted = (await perDay(store.db, ws, windows()[0]!)).reduce((n, d) => n + d.positiveReplies, 0);
    expect(counted).toBeGreaterThan(5);
  }, 240_000);

  it('a workspace deleted with its interested replies leaves no positive-reply rows behind', async () => {
    const gone = id();
    await store.db.insertInto('workspace').values({ id: gone, name: 'Gone' }).execute();
    const seq = id();
    await store.db.insertInto('sequence').values({ id: seq, workspace_id: gone, key: 'g', name: 'Gone', send_window: JSON.stringify({ kind: 'any' }) }).execute();
    const leadId = id();
    await store.db.insertInto('lead').values({ id: leadId, workspace_id: gone, email: 'g@p.test', email_norm: 'g@p.test' }).execute();
    const eid = id();
    await sql`insert into enrollment (id, workspace_id, sequence_id, lead_id, state, time_zone, zone_source) values (${eid}, ${gone}, ${seq}, ${leadId}, 'active', 'UTC', 'workspace')`.execute(store.db);
    for (let i = 0; i < 2; i++) {
      await sql`insert into message (id, workspace_id, enrollment_id, direction, message_id, at, intent) values (${id()}, ${gone}, ${eid}, 'inbound', ${`<g${i}@p.test>`}, ${new Date(base + i * DAY)}, 'interested')`.execute(store.db);
    }
    const rows = async () => (await sql<{ n: number }>`select ((select count(*) from positive_fact where workspace_id = ${gone}) + (select count(*) from enrollment_positive where workspace_id = ${gone}))::int as n`.execute(store.db)).rows[0]!.n;
    expect(await rows()).toBe(2);
    await store.db.deleteFrom('workspace').where('id', '=', gone).execute();
    expect(await rows()).toBe(0);
    await foldFigures(store);
  });

  it('folds nothing twice when two folds run at once, and a fold with nothing new is a no-op', async () => {
    await write(200);
    const before = await perDay(store.db, ws, calendarWindow(base + 29 * DAY, 30, 'Asia/Kolkata'));
    await Promise.all([foldFigures(store), foldFigures(store)]);
    const again = await foldFigures(store);
    expect(again.journal.from).toBe(again.journal.to);
    expect(await perDay(store.db, ws, calendarWindow(base + 29 * DAY, 30, 'Asia/Kolkata'))).toEqual(before);
    await agree();
  });

  /** Bucket groups (every column that says where a row counts) with more than one row. */
  async function splitBuckets(): Promise<number> {
    const r = await sql<{ n: number }>`
      select count(*)::int as n from (
        select 1 from figure_bucket
        group by workspace_id, level, width, bucket, series, sequence_id, step_id, variant_id, mailbox_id, local_hour, source having count(*) > 1) g`.execute(store.db);
    return r.rows[0]!.n;
  }

  it('merges each bucket into one row, and the figures stay exact through folds and compactions', async () => {
    // Small folds, as the API's every minute: the same buckets gain a row each time.
    for (let round = 0; round < 4; round++) {
      await write(random.int(30, 80));
      await foldFigures(store);
    }
    expect(await splitBuckets()).toBeGreaterThan(0);
    const before = (await foldState(store.db)).buckets;
    const c = await compactFigures(store);
    expect(c.removed).toBeGreaterThan(c.written);
    expect(await splitBuckets()).toBe(0);
    expect((await foldState(store.db)).buckets).toBe(before - c.removed + c.written);
    await agree();
    // Nothing new: nothing to do.
    expect(await compactFigures(store)).toEqual({ removed: 0, written: 0 });
    // New rows past the last compaction are merged with the compacted ones.
    await write(60);
    await foldFigures(store);
    expect(await splitBuckets()).toBeGreaterThan(0);
    await compactFigures(store);
    expect(await splitBuckets()).toBe(0);
    await agree();
    await agreeOnLevels();
  }, 240_000);

  it.skipIf(backend === 'pglite')('counts a compaction that commits while a read runs once: the read keeps its snapshot', async () => {
    const w = calendarWindow(base + 29 * DAY, 30, 'UTC');
    const total = (db: Db, fold: Awaited<ReturnType<typeof foldPosition>>) =>
      sql<{ n: number }>`select coalesce(sum(f.n), 0)::int as n from (${windowFacts(fold, ws, w.since, w.until, 'w')}) f`.execute(db).then((r) => Number(r.rows[0]!.n));
    const splitUp = async () => {
      for (let round = 0; round < 3; round++) {
        await write(random.int(30, 60));
        await foldFigures(store);
      }
    };
    await splitUp();
    const truth = await fromSource(async (db) => total(db, await foldPosition(db)));
    // The hazard itself: the position read, then a compaction, then the buckets on a new snapshot.
    const stale = await foldPosition(store.db);
    await splitUp();
    const truthAfter = await fromSource(async (db) => total(db, await foldPosition(db)));
    await compactFigures(store);
    expect(await total(store.db, stale)).not.toBe(truthAfter);
    // readFolded: the compaction commits on another connection between the position and the read.
    await splitUp();
    const now = await fromSource(async (db) => total(db, await foldPosition(db)));
    const read = await readFolded(store.db, async (db, fold) => {
      await compactFigures(store);
      return total(db, fold);
    });
    expect(read).toBe(now);
    expect(truth).toBeLessThan(now);
  }, 120_000);

  it("derives levels 'v' and 'b' from level 'x' on upgrade (migration 0128) as the fold writes them", async () => {
    const levels = (db: Db) =>
      sql<{ k: string; n: number }>`
        select concat_ws('|', level, width, bucket, series, sequence_id, step_id, variant_id, mailbox_id) as k, sum(n)::int as n
        from figure_bucket where level in ('v', 'b') group by 1 having sum(n) <> 0 order by 1`
        .execute(db)
        .then((r) => r.rows);
    const folded = await levels(store.db);
    expect(folded.length).toBeGreaterThan(100);
    const inserts = readFileSync(new URL('../store/migrations/0128_figure_levels_step_mailbox.sql', import.meta.url), 'utf8')
      .split('\n')
      .filter((l) => !l.startsWith('--'))
      .join('\n')
      .split(';')
      .map((x) => x.trim())
      .filter((x) => x.startsWith('insert'));
    expect(inserts).toHaveLength(4);
    let derived: Awaited<ReturnType<typeof levels>> = [];
    await store.db
      .transaction()
      .execute(async (tx) => {
        await sql`delete from figure_bucket where level in ('v', 'b')`.execute(tx);
        for (const q of inserts) await sql.raw(q).execute(tx);
        derived = await levels(tx);
        throw new Error('rolled back');
      })
      .catch((e: unknown) => {
        if ((e as Error).message !== 'rolled back') throw e;
      });
    expect(derived).toEqual(folded);
  });

  it("keeps another workspace's facts out", async () => {
    const w = calendarWindow(base + 29 * DAY, 30, 'UTC');
    const mine = await perDay(store.db, ws, w);
    const theirs = await perDay(store.db, other, w);
    expect(theirs.reduce((n, d) => n + d.sends + d.replies + d.opened, 0)).toBeGreaterThan(0);
    expect(await fromSource((db) => perDay(db, other, w))).toEqual(theirs);
    expect(mine).toEqual(await fromSource((db) => perDay(db, ws, w)));
  });
});

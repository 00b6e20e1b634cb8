/**
 * Analytics at scale: every query the Analytics screen makes, on one workspace holding 1M
 * enrollments and about 10M events (journal entries, tracking events and replies) spread over a
 * year, on PostgreSQL (issue 18's target: p99 under 200 ms for every screen's queries).
 *
 *   npm run bench -- analytics-scale [--enrollments=1000000] [--requests=30] [--backend=postgres|pglite] [--keep]
 *
 * `--keep` leaves the PostgreSQL database in place (its name is printed); `--reuse=NAME` measures
 * again on such a world (migrated first: an index a migration adds is built), without seeding it.
 *
 * The API's fold (src/ops/figure-rollup.ts) runs once on the whole world, as at a first start, and
 * its time is reported; the reads then also count a minute's worth of rows written after it.
 *
 * Requests go through Fastify's inject (the full route: session, membership, validation, the
 * queries of ops/figures.ts, serialisation), as bench/api-lists.ts does. The screen's requests are
 * the analytics ones and the sequence list (its sequence picker). The anchor is the
 * workspace's settings (session, membership, one row, serialisation), measured in the same
 * rounds, so the ratio says what a screen's request costs beside a trivial one on this machine at
 * that moment.
 *
 * The world is written with set-based SQL. Enrollment g (1..N) is in sequence g mod 20, sends from
 * mailbox g mod 10, starts at a moment spread evenly over the last 350 days and gets 1 to 3 emails
 * three days apart; half of them have a call task, a quarter a logged call (2% of those a meeting),
 * one in twelve replies (half of the replies interested), one in fifty bounces, one in two hundred
 * unsubscribes; 40% of the emails are opened by a person, 40% fetched by an image proxy, 20%
 * clicked. The journal is partitioned by month as production partitions it (store/partitions.ts).
 */
import { sql } from 'kysely';
import { systemClock } from '../src/common/clock.ts';
import { newId } from '../src/common/ids.ts';
import { seededRandom } from '../src/common/random.ts';
import { addMembership } from '../src/api/auth/accounts.ts';
import { hashPassword } from '../src/api/auth/passwords.ts';
import { createSession, SESSION_COOKIE } from '../src/api/auth/sessions.ts';
import { defaultAuthSettings } from '../src/api/context.ts';
import { buildServer } from '../src/api/server.ts';
import { compactFigures, foldFigures, foldState } from '../src/ops/figure-rollup.ts';
import { describeSlowRounds, watchPauses, type Round } from './lib/slow-rounds.ts';
import { round } from './lib/format.ts';
import { describeLoad, loadFigures, machineLoad } from './lib/rounds.ts';
import { percentile } from './lib/stats.ts';
import { migrate } from '../src/store/migrate.ts';
import { openStore, type Store } from '../src/store/store.ts';
import { benchStore, flag } from './support/backends.ts';

const SEQUENCES = 20;
const MAILBOXES = 10;
/** Email steps per sequence (positions 1..3), then one call step (position 4). */
const EMAILS = 3;
const DAY = 86_400_000;

export default async function (args: string[]): Promise<Record<string, unknown>> {
  const backend = flag(args, 'backend', 'postgres') as 'postgres' | 'pglite';
  const n = Number(flag(args, 'enrollments', '1000000'));
  const nRequests = Number(flag(args, 'requests', '30'));
  const loadBefore = machineLoad();
  console.log(`Analytics at scale: ${n.toLocaleString('en')} enrollments on ${backend}; ${describeLoad(loadBefore)}`);
  const keep = args.includes('--keep');
  const reuse = flag(args, 'reuse', '');
  const { store, drop, url } = reuse ? await reusedStore(reuse) : await benchStore(backend);
  const random = seededRandom('analytics-scale');
  const id = () => newId(systemClock.now(), random);
  try {
    const t0 = Date.now();
    const now = Date.now();
    const seed = async () => {
      const workspaceId = id();
      await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Bench' }).execute();
      const accountId = id();
      await store.db.insertInto('account').values({ id: accountId, email: 'owner@bench.test', name: null, password_hash: await hashPassword('bench password 1') }).execute();
      const userId = await addMembership(store.db, { clock: systemClock, random }, { accountId, workspaceId, email: 'owner@bench.test', name: null, role: 'owner' });
      const mailboxIds = Array.from({ length: MAILBOXES }, () => id());
      for (const [i, m] of mailboxIds.entries()) {
        await store.db.insertInto('mailbox').values({ id: m, workspace_id: workspaceId, user_id: userId, email: `rep${i}@bench.test`, provider: 'smtp_imap' }).execute();
      }
      const sequenceIds: string[] = [];
      const stepIds: string[] = []; // sequence s, step k (0-based, the call last): stepIds[s * 4 + k]
      const variantIds: string[] = []; // sequence s, first email, variant v: variantIds[s * 2 + v]
      for (let s = 0; s < SEQUENCES; s++) {
        const sid = id();
        sequenceIds.push(sid);
        await store.db.insertInto('sequence').values({ id: sid, workspace_id: workspaceId, key: `seq-${s}`, name: `Sequence ${s}`, send_window: JSON.stringify({ kind: 'any' }) }).execute();
        for (let k = 0; k <= EMAILS; k++) {
          const stid = id();
          stepIds.push(stid);
          await store.db.insertInto('step').values({ id: stid, sequence_id: sid, key: `s${k + 1}`, position: k + 1, kind: k < EMAILS ? 'email' : 'call', delay_amount: 3, delay_unit: 'days' }).execute();
          const variants = k === 0 ? 2 : 1;
          for (let v = 0; v < variants; v++) {
            const vid = id();
            if (k === 0) variantIds.push(vid);
            await store.db.insertInto('variant').values({ id: vid, step_id: stid, key: String.fromCharCode(97 + v), subject: k === 0 ? `Hello ${v}` : null, body: 'Hi {{first_name}}', weight: 1 }).execute();
          }
        }
      }
      // Production's monthly partitions of the journal, for the year the world covers.
      for (let m = 13; m >= -1; m--) {
        const d = new Date(now);
        await sql`select cadenza_create_event_partition(${new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - m, 1))})`.execute(store.db);
      }
      const start = sql`(${new Date(now - 365 * DAY)}::timestamptz + ((g::float8 / ${n}) * 350 || ' days')::interval)`;
      const enr = sql`md5('e' || g)::uuid`;
      const seqOf = sql`(${sequenceIds}::uuid[])[1 + g % ${SEQUENCES}]`;
      const stepOf = stepIn(stepIds);
      const emails = sql`(1 + g % ${EMAILS})`;
      const sentAt = sql`(${start} + (k * 3 || ' days')::interval + interval '1 hour')`;
      const phase = async (what: string, q: ReturnType<typeof sql>) => {
        const t = Date.now();
        const r = await q.execute(store.db);
        console.log(`  ${what}: ${Number(r.numAffectedRows ?? 0).toLocaleString('en')} rows in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      };
      console.log('seeding:');
      await phase('leads', sql`
        insert into lead (id, workspace_id, email, email_norm, first_name, company, created_at)
        select md5('l' || g)::uuid, ${workspaceId}, 'lead' || g || '@co' || (g % 5000) || '.test', 'lead' || g || '@co' || (g % 5000) || '.test', 'First' || g, 'Company ' || (g % 5000), ${start}
        from generate_series(1, ${n}) g`);
      await phase('enrollments', sql`
        insert into enrollment (id, workspace_id, sequence_id, lead_id, mailbox_id, state, time_zone, zone_source, created_at)
        select ${enr}, ${workspaceId}, ${seqOf}, md5('l' || g)::uuid, (${mailboxIds}::uuid[])[1 + g % ${MAILBOXES}],
               case when g % 12 = 0 then 'replied' when g % 50 = 1 then 'bounced' when g % 200 = 3 then 'unsubscribed' else 'finished' end,
               (array['America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'UTC'])[1 + g % 4], 'lead', ${start}
        from generate_series(1, ${n}) g`);
      await phase('send requests', sql`
        insert into send_request (id, workspace_id, enrollment_id, step_id, mailbox_id, variant_id, state, due_at, message_id, bounce_kind, bounced_at, created_at)
        select md5('r' || g || '-' || k)::uuid, ${workspaceId}, ${enr}, ${stepOf(sql`k`)}, (${mailboxIds}::uuid[])[1 + g % ${MAILBOXES}],
               case when k = 0 then (${variantIds}::uuid[])[1 + (g % ${SEQUENCES}) * 2 + (g / ${SEQUENCES}) % 2] else (select v.id from variant v where v.step_id = ${stepOf(sql`k`)}) end,
               'sent', ${sentAt}, '<r' || g || '-' || k || '@bench.test>',
               case when g % 50 = 1 and k = 0 then 'hard' when g % 97 = 5 then 'soft' end,
               case when (g % 50 = 1 and k = 0) or g % 97 = 5 then ${sentAt} + interval '5 minutes' end, ${sentAt}
        from generate_series(1, ${n}) g, generate_series(0, ${EMAILS - 1}) k where k < ${emails}`);
      const journal = (type: string, at: ReturnType<typeof sql>, event: ReturnType<typeof sql>, from: ReturnType<typeof sql>) =>
        sql`insert into event (workspace_id, enrollment_id, type, payload, at) select ${workspaceId}, ${enr}, ${type}, jsonb_build_object('event', ${event}, 'from', 'active', 'to', 'active', 'effects', '[]'::jsonb), ${at} ${from}`;
      const perEmail = sql`from generate_series(1, ${n}) g, generate_series(0, ${EMAILS - 1}) k where k < ${emails}`;
      await phase('journal: enrolled', journal('enrolled', start, sql`jsonb_build_object('type', 'enrolled')`, sql`from generate_series(1, ${n}) g`));
      await phase('journal: step_due', journal('step_due', sql`${sentAt} - interval '1 hour'`, sql`jsonb_build_object('type', 'step_due')`, perEmail));
      await phase('journal: step_sent', journal('step_sent', sentAt, sql`jsonb_build_object('type', 'step_sent', 'stepId', ${stepOf(sql`k`)}, 'at', ${sentAt})`, perEmail));
      await phase('journal: ignored timers', journal('step_due.ignored', sql`${sentAt} - interval '2 hours'`, sql`jsonb_build_object('type', 'step_due')`, perEmail));
      const afterLast = sql`(${start} + ((${emails} - 1) * 3 || ' days')::interval + interval '1 day')`;
      await phase('journal: call tasks', journal('step_due', afterLast, sql`jsonb_build_object('type', 'step_due')`, sql`from generate_series(1, ${n}) g where g % 2 = 0`));
      await phase('journal: calls logged', journal('call_outcome', sql`${afterLast} + interval '3 hours'`,
        sql`jsonb_build_object('type', 'call_outcome', 'stepId', ${stepOf(sql`${EMAILS}`)}, 'outcome', case when g % 200 = 4 then 'meeting_booked' else 'no_answer' end)`, sql`from generate_series(1, ${n}) g where g % 4 = 0`));
      const replyAt = sql`(${start} + interval '2 days')`;
      await phase('journal: replies', journal('reply', replyAt, sql`jsonb_build_object('type', 'reply')`, sql`from generate_series(1, ${n}) g where g % 12 = 0`));
      await phase('journal: bounces', journal('bounce', sql`${sentAt} + interval '5 minutes'`, sql`jsonb_build_object('type', 'bounce', 'hard', true)`, sql`from generate_series(1, ${n}) g, generate_series(0, 0) k where g % 50 = 1`));
      await phase('journal: unsubscribes', journal('unsubscribe', sql`${start} + interval '1 day'`, sql`jsonb_build_object('type', 'unsubscribe')`, sql`from generate_series(1, ${n}) g where g % 200 = 3`));
      await phase('tracking events', sql`
        insert into tracking_event (workspace_id, send_request_id, enrollment_id, kind, verdict, confidence, at)
        select ${workspaceId}, md5('r' || g || '-' || k)::uuid, ${enr}, x.kind, x.verdict, 0.9, ${sentAt} + x.after
        from generate_series(1, ${n}) g, generate_series(0, ${EMAILS - 1}) k,
          lateral (values ('open', 'human', interval '3 hours', g % 10 < 4), ('open', 'human', interval '1 day', g % 10 = 0),
                          ('open', 'proxy', interval '1 minute', g % 10 between 4 and 7), ('click', 'human', interval '4 hours', g % 10 < 2)) as x(kind, verdict, after, yes)
        where k < ${emails} and x.yes`);
      await phase('replies (messages)', sql`
        insert into message (id, workspace_id, mailbox_id, enrollment_id, direction, message_id, subject, from_addr, at, received_at, folder, label, intent, confidence, action, excerpt, stop_latency_ms)
        select md5('m' || g)::uuid, ${workspaceId}, (${mailboxIds}::uuid[])[1 + g % ${MAILBOXES}], ${enr}, 'inbound', '<m' || g || '@co.test>', 'Re: hello', 'lead' || g || '@co.test',
               ${replyAt}, ${replyAt}, 'inbox', 'human_reply', case when g % 24 = 0 then 'interested' else 'not_now' end, 0.9, 'reply', 'Thanks', 800 + g % 5000
        from generate_series(1, ${n}) g where g % 12 = 0`);
      const t = Date.now();
      // The steady state autovacuum keeps a live database in: statistics, and the visibility map that
      // lets a count by index (the sequence list's) skip the table.
      await sql`vacuum analyze`.execute(store.db);
      console.log(`  vacuum analyze: ${((Date.now() - t) / 1000).toFixed(1)} s`);
      const counts = await sql<{ events: number; tracking: number; messages: number }>`
        select (select count(*) from event)::int as events, (select count(*) from tracking_event)::int as tracking, (select count(*) from message)::int as messages`.execute(store.db);
      const c = counts.rows[0]!;
      const allEvents = Number(c.events) + Number(c.tracking) + Number(c.messages);
      const seedMs = Date.now() - t0;
      console.log(`seeded ${n.toLocaleString('en')} enrollments and ${allEvents.toLocaleString('en')} events (journal ${Number(c.events).toLocaleString('en')}, tracking ${Number(c.tracking).toLocaleString('en')}, replies ${Number(c.messages).toLocaleString('en')}) in ${(seedMs / 1000).toFixed(0)} s`);
      return { workspaceId, accountId, sequenceIds, stepIds, c, allEvents, seedMs };
    };
    const { workspaceId, accountId, sequenceIds, stepIds, c, allEvents, seedMs } = reuse ? await findWorld(store) : await seed();
    const stepOf = stepIn(stepIds);

    // The production fold (what the API process runs every minute), from nothing: a first start on
    // a journal of this size. Then a minute's worth of new rows is left unfolded, so every read
    // below also counts rows past the fold, as reads do between folds.
    const tf = Date.now();
    const folded = await foldFigures(store);
    const foldMs = Date.now() - tf;
    const state = await foldState(store.db);
    console.log(`first fold: journal ids to ${folded.journal.to}, tracking ids to ${folded.tracking.to}, positive-reply facts to ${folded.positive.to}, ${state.buckets.toLocaleString('en')} bucket rows, in ${(foldMs / 1000).toFixed(1)} s`);
    // The API's compaction (every ten minutes) after it: one row per bucket.
    const tc = Date.now();
    const compacted = await compactFigures(store);
    const compactMs = Date.now() - tc;
    const afterCompaction = (await foldState(store.db)).buckets;
    console.log(`compaction: ${compacted.removed.toLocaleString('en')} rows merged into ${compacted.written.toLocaleString('en')}, ${afterCompaction.toLocaleString('en')} bucket rows, in ${(compactMs / 1000).toFixed(1)} s`);
    // Then ten minutes of a busy day folded minute by minute and not yet compacted, the most a read
    // meets between two compactions: each fold adds a row to each bucket it touches.
    const recent = sql`(${new Date(now)}::timestamptz - (g || ' seconds')::interval)`;
    const perMinute = 200;
    for (let minute = 0; minute < 10; minute++) {
      await sql`insert into event (workspace_id, enrollment_id, type, payload, at)
        select ${workspaceId}, md5('e' || g)::uuid, 'step_sent', jsonb_build_object('event', jsonb_build_object('type', 'step_sent', 'stepId', ${stepOf(sql`1 + g % 2`)})), ${recent}
        from generate_series(${minute * perMinute + 1}::int, ${(minute + 1) * perMinute}::int) g`.execute(store.db);
      await sql`insert into tracking_event (workspace_id, send_request_id, enrollment_id, kind, verdict, confidence, at)
        select ${workspaceId}, md5('r' || g || '-0')::uuid, md5('e' || g)::uuid, 'open', 'human', 0.9, ${recent}
        from generate_series(${minute * perMinute + 1}::int, ${(minute + 1) * perMinute}::int) g`.execute(store.db);
      await foldFigures(store);
    }
    const beforeReads = (await foldState(store.db)).buckets;
    console.log(`ten minute-folds of ${perMinute} journal entries and ${perMinute} tracking events each, not compacted: ${beforeReads.toLocaleString('en')} bucket rows`);
    // What autovacuum does after a table grows this much: the planner's statistics of the buckets.
    await sql`vacuum analyze figure_bucket`.execute(store.db);
    const pastFold = 2_000;
    await sql`insert into event (workspace_id, enrollment_id, type, payload, at)
      select ${workspaceId}, md5('e' || g)::uuid, 'step_sent', jsonb_build_object('event', jsonb_build_object('type', 'step_sent', 'stepId', ${stepOf(sql`0`)})), ${recent}
      from generate_series(1, ${pastFold}) g`.execute(store.db);
    await sql`insert into tracking_event (workspace_id, send_request_id, enrollment_id, kind, verdict, confidence, at)
      select ${workspaceId}, md5('r' || g || '-0')::uuid, md5('e' || g)::uuid, 'open', 'human', 0.9, ${recent} from generate_series(1, ${pastFold}) g`.execute(store.db);
    console.log(`${pastFold.toLocaleString('en')} journal entries and ${pastFold.toLocaleString('en')} tracking events written since, left past the fold`);

    const app = buildServer({ store, clock: systemClock, version: 'bench', api: { random, publicUrl: 'http://localhost', ...defaultAuthSettings } });
    await app.ready();
    const cookie = `${SESSION_COOKIE}=${(await createSession(store.db, accountId, systemClock, 3_600_000)).token}`;
    const base = `/api/workspaces/${workspaceId}`;
    const cases: Array<[string, string]> = [
      ['anchor_settings', `${base}/settings`],
      ['sequences_list', `${base}/sequences`],
      ['analytics_30d', `${base}/analytics?days=30&zone=UTC`],
      ['analytics_30d_new_york', `${base}/analytics?days=30&zone=America%2FNew_York`],
      ['analytics_7d_kolkata', `${base}/analytics?days=7&zone=Asia%2FKolkata`],
      ['analytics_90d', `${base}/analytics?days=90&zone=UTC`],
      ['analytics_30d_one_sequence', `${base}/analytics?days=30&zone=UTC&sequenceId=${sequenceIds[3]}`],
      ['analytics_days_csv_30d', `${base}/analytics/days.csv?days=30&zone=UTC`],
      ['analytics_mailboxes_7d', `${base}/analytics/mailboxes?days=7&zone=UTC`],
      ['analytics_variants_all_time', `${base}/analytics/variants`],
      ['analytics_breakdown_step_30d', `${base}/analytics/breakdown?by=step&days=30&zone=UTC`],
      ['analytics_breakdown_rep_30d_berlin', `${base}/analytics/breakdown?by=rep&days=30&zone=Europe%2FBerlin`],
      // The charts (src/api/routes/analytics-charts.ts): the funnel through the rollup, the others
      // bounded reads of the source (docs/api.md, "The charts").
      ['analytics_funnel_30d_one_sequence', `${base}/analytics/funnel?days=30&zone=UTC&sequenceId=${sequenceIds[3]}`],
      ['analytics_reply_times_30d', `${base}/analytics/reply-times?days=30&zone=UTC`],
      ['analytics_send_hours_30d', `${base}/analytics/send-hours?days=30&zone=UTC`],
      ['analytics_mailbox_days_30d', `${base}/analytics/mailbox-days?days=30&zone=UTC`],
    ];
    const ms = new Map(cases.map(([name]) => [name, [] as number[]]));
    const rounds: Round[] = [];
    const gc = watchPauses();
    const requestRound = async (): Promise<Round> => {
      const r: Round = { at: Date.now(), ms: new Map() };
      for (const [name, url] of cases) {
        const t1 = process.hrtime.bigint();
        const res = await app.inject({ method: 'GET', url, headers: { cookie } });
        r.ms.set(name, Number(process.hrtime.bigint() - t1) / 1e6);
        if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      }
      return r;
    };
    // The first round after the API starts opens the pool's connections, and a new PostgreSQL
    // server process loads the schema's catalog as it plans (the journal's partitions and their
    // indexes): a cold start, reported apart. A running API keeps its connections for minutes
    // (store/pg-failover.ts), so the screen's requests meet warm ones.
    const cold = await requestRound();
    const coldTotal = [...cold.ms.values()].reduce((a, b) => a + b, 0);
    const coldSlowest = [...cold.ms.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4);
    console.log(`  cold first round (new connections): ${coldTotal.toFixed(0)} ms; slowest ${coldSlowest.map(([n, v]) => `${n} ${v.toFixed(0)}`).join(', ')}`);
    // Interleaved: each request round runs every case once, so a burst of load hits all of them alike.
    for (let i = 0; i < nRequests; i++) {
      const r = await requestRound();
      for (const [name, took] of r.ms) ms.get(name)!.push(took);
      rounds.push(r);
      process.stdout.write(`\r  request round ${i + 1}/${nRequests}`);
    }
    process.stdout.write('\n');
    // Slow rounds with their wall-clock times, to line up with PostgreSQL's log (log_checkpoints,
    // log_autovacuum_min_duration) and with this process's GC pauses.
    for (const line of describeSlowRounds(rounds, gc.stop())) console.log(`  slow ${line}`);
    await app.close();
    const loadAfter = machineLoad();
    const anchorP50 = percentile(ms.get('anchor_settings')!, 50);
    // The next minute's fold: what the API process does between two of them.
    const ti = Date.now();
    await foldFigures(store);
    const incrementalMs = Date.now() - ti;
    console.log(`fold of the ${(2 * pastFold).toLocaleString('en')} rows past it: ${incrementalMs} ms`);
    const out: Record<string, unknown> = {
      backend, enrollments: n, events: allEvents, journal_events: Number(c.events), tracking_events: Number(c.tracking), replies: Number(c.messages), requests: nRequests,
      seed_s: Math.round(seedMs / 1000), first_fold_s: round(foldMs / 1000), bucket_rows_folded: state.buckets, compaction_s: round(compactMs / 1000),
      bucket_rows_compacted: afterCompaction, bucket_rows_read: beforeReads, incremental_fold_ms: incrementalMs,
      cold_round_ms: round(coldTotal), cold_round_worst_ms: round(coldSlowest[0]?.[1] ?? 0),
    };
    let worst = 0;
    for (const [name] of cases) {
      const v = ms.get(name)!;
      const [p50, p99, min, max] = [percentile(v, 50), percentile(v, 99), Math.min(...v), Math.max(...v)];
      if (name !== 'anchor_settings') worst = Math.max(worst, p99);
      console.log(`${name.padEnd(30)} p50 ${p50.toFixed(1).padStart(8)} ms  p99 ${p99.toFixed(1).padStart(8)} ms  (min ${min.toFixed(1)}, max ${max.toFixed(1)})  p50 / anchor's ${(p50 / anchorP50).toFixed(1)}`);
      Object.assign(out, { [`${name}_p50_ms`]: round(p50), [`${name}_p99_ms`]: round(p99), [`${name}_min_ms`]: round(min), [`${name}_max_ms`]: round(max), [`${name}_p50_per_anchor`]: round(p50 / anchorP50) });
    }
    console.log(`worst p99 of the screen's requests: ${worst.toFixed(1)} ms (target 200 ms)`);
    console.log(`load after: ${describeLoad(loadAfter)}`);
    return { ...out, worst_p99_ms: round(worst), ...loadFigures(loadBefore, loadAfter) };
  } finally {
    if ((keep || reuse) && url) {
      console.log(`kept the database: ${new URL(url).pathname.slice(1)}`);
      await store.close();
    } else await drop();
  }
}

/** The id of email k (0-based; the call is EMAILS) of enrollment g's sequence, in SQL over `g`. */
function stepIn(stepIds: string[]) {
  return (k: ReturnType<typeof sql>) => sql`(${stepIds}::uuid[])[1 + (g % ${SEQUENCES}) * ${EMAILS + 1} + ${k}]`;
}

/** `--reuse=NAME`: a world an earlier `--keep` left, migrated to this checkout's schema (new indexes built). */
async function reusedStore(name: string): Promise<{ store: Store; url: string; drop(): Promise<void> }> {
  const u = new URL(process.env.CADENZA_BENCH_PG_URL ?? process.env.CADENZA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  u.pathname = `/${name}`;
  const store = await openStore({ databaseUrl: u.toString(), poolSize: 4 });
  const t = Date.now();
  await migrate(store);
  console.log(`reusing the world in ${name}; migrated in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  await sql`vacuum analyze figure_bucket`.execute(store.db);
  return { store, url: u.toString(), drop: () => store.close() };
}

/** The ids and sizes of a kept world (the seeding's order: sequences seq-0…, steps by position). */
async function findWorld(store: Store) {
  const one = async (q: ReturnType<typeof sql>) => (await sql<{ id: string }>`${q}`.execute(store.db)).rows[0]!.id;
  const workspaceId = await one(sql`select id from workspace where name = 'Bench'`);
  const accountId = await one(sql`select id from account where email = 'owner@bench.test'`);
  const seqs = (await sql<{ id: string }>`select id from sequence where workspace_id = ${workspaceId} order by (substr(key, 5))::int`.execute(store.db)).rows.map((r) => r.id);
  const steps = (await sql<{ id: string }>`select st.id from step st join sequence q on q.id = st.sequence_id where q.workspace_id = ${workspaceId} order by (substr(q.key, 5))::int, st.position`.execute(store.db)).rows.map((r) => r.id);
  const counts = await sql<{ events: number; tracking: number; messages: number }>`
    select (select count(*) from event)::int as events, (select count(*) from tracking_event)::int as tracking, (select count(*) from message)::int as messages`.execute(store.db);
  const c = counts.rows[0]!;
  return { workspaceId, accountId, sequenceIds: seqs, stepIds: steps, c, allEvents: Number(c.events) + Number(c.tracking) + Number(c.messages), seedMs: 0 };
}

/**
 * Dispatch: plan a day for M mailboxes (default 10,000) and S due steps (default 300,000) on
 * PGlite (a folder on disk) and on PostgreSQL: every queued send request gets its send instant
 * under the mailboxes' daily caps (some ramping), hourly caps and gaps, their working days, the
 * prospects' windows (several zones, some that never meet the mailbox's day), sequence and
 * workspace caps, across the sequences' mailbox pools. Target: under 60 s on PostgreSQL.
 *
 *   npm run bench -- dispatch [--mailboxes=10000] [--steps=300000] [--backends=pglite,postgres] [--seed=42]
 *
 * Figures per backend: the planning pass (read, plan in memory, write) in seconds and decisions
 * per second (one decision = one request given a slot or a reason); the second pass over the same
 * state (the daily re-plan when nothing changed: it writes nothing); the claim-time reservation
 * (reserveSlot) median and p99 over 1,000 claims; and a check made by the database itself that no
 * mailbox has more slots on a local date (PostgreSQL's own time zone conversion) than its cap.
 */
import { sql } from 'kysely';
import { newId } from '../src/common/ids.ts';
import { seededRandom, type Random } from '../src/common/random.ts';
import { parseWindow } from '../src/calendar/index.ts';
import { planMailboxes, type PlanReport } from '../src/sending/dispatch/plan.ts';
import { reserveSlot } from '../src/sending/dispatch/reserve.ts';
import { SimClock } from '../src/sim/sim-clock.ts';
import type { Store } from '../src/store/store.ts';
import { int, round } from './lib/format.ts';
import { percentile } from './lib/stats.ts';
import { benchStore, flag } from './support/backends.ts';

// Monday 1 June 2026, 04:00 UTC: midnight in New York, morning in Europe; the whole working day ahead.
const NOW = Date.UTC(2026, 5, 1, 4, 0);
const REGIONS = [
  { mailbox: 'America/New_York', leads: ['America/New_York', 'America/Chicago', 'America/New_York', 'America/Los_Angeles'] },
  { mailbox: 'America/Los_Angeles', leads: ['America/Los_Angeles', 'America/Denver', 'America/Chicago', 'America/Los_Angeles'] },
  { mailbox: 'Europe/London', leads: ['Europe/London', 'Europe/Dublin', 'Europe/Berlin', 'Europe/London'] },
  { mailbox: 'Europe/Berlin', leads: ['Europe/Berlin', 'Europe/Paris', 'Europe/Warsaw', 'Europe/Madrid'] },
];
// 1 lead in 40 sits where its window never meets the mailbox's working day (it gets a reason, not a slot).
const FAR = ['Asia/Tokyo', 'Australia/Sydney'];
const WINDOWS = ['Mon-Fri 08:30-17:30', 'Mon-Fri 09:00-17:00', 'Mon-Fri 08:00-18:00', 'any', 'Mon-Thu 09:00-16:00'];
const SEQUENCES_PER_WORKSPACE = 5;
const MAILBOXES_PER_WORKSPACE = 100;

interface Seeded {
  mailboxIds: string[];
  workspaces: number;
  sequences: number;
}

async function insertChunks(n: number, chunk: number, fn: (from: number, to: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < n; i += chunk) await fn(i, Math.min(n, i + chunk));
}

async function seedDay(store: Store, mailboxes: number, steps: number, random: Random): Promise<Seeded> {
  const id = () => newId(NOW, random);
  const workspaces = Math.max(1, Math.round(mailboxes / MAILBOXES_PER_WORKSPACE));
  const wsIds = Array.from({ length: workspaces }, id);
  await sql`
    insert into workspace (id, name, time_zone, daily_cap)
    select u.id, 'Bench ' || u.n, 'America/New_York', u.cap
    from unnest(${wsIds}::uuid[], ${wsIds.map((_, i) => i)}::int[], ${wsIds.map((_, i) => (i % 10 === 3 ? 20 * MAILBOXES_PER_WORKSPACE : null))}::int[]) as u(id, n, cap)`.execute(store.db);
  // Mailboxes: 30 a day; one in five ramping (5 + 3 a day, started 0-9 days ago); one in ten with an hourly cap of 4.
  const mb = { id: [] as string[], ws: [] as string[], zone: [] as string[], ramp: [] as string[], rampAt: [] as Array<string | null>, hourly: [] as Array<number | null> };
  for (let i = 0; i < mailboxes; i++) {
    mb.id.push(id());
    mb.ws.push(wsIds[Math.floor(i / MAILBOXES_PER_WORKSPACE) % workspaces]!);
    mb.zone.push(REGIONS[i % REGIONS.length]!.mailbox);
    const ramping = i % 5 === 1;
    mb.ramp.push(ramping ? JSON.stringify({ start: 5, step: 3 }) : '{}');
    mb.rampAt.push(ramping ? new Date(NOW - (i % 10) * 86_400_000).toISOString() : null);
    mb.hourly.push(i % 10 === 7 ? 4 : null);
  }
  await insertChunks(mailboxes, 20_000, (a, b) =>
    sql`
      insert into mailbox (id, workspace_id, email, provider, time_zone, ramp, ramp_started_at, hourly_cap)
      select u.id, u.ws, 'rep' || u.n || '@bench.test', 'smtp_imap', u.zone, u.ramp::jsonb, u.ramp_at, u.hourly
      from unnest(${mb.id.slice(a, b)}::uuid[], ${mb.ws.slice(a, b)}::uuid[], ${mb.id.slice(a, b).map((_, k) => a + k)}::int[],
                  ${mb.zone.slice(a, b)}::text[], ${mb.ramp.slice(a, b)}::text[], ${mb.rampAt.slice(a, b)}::timestamptz[], ${mb.hourly.slice(a, b)}::int[])
        as u(id, ws, n, zone, ramp, ramp_at, hourly)`.execute(store.db).then(() => undefined),
  );
  // Sequences: five per workspace, each with a pool of 20 of its mailboxes; one in ten capped at 400 a day.
  const seq = { id: [] as string[], ws: [] as string[], window: [] as string[], cap: [] as Array<number | null>, step: [] as string[] };
  const pools: number[][] = [];
  for (let w = 0; w < workspaces; w++) {
    const members = mb.id.map((_, i) => i).filter((i) => Math.floor(i / MAILBOXES_PER_WORKSPACE) % workspaces === w);
    for (let s = 0; s < SEQUENCES_PER_WORKSPACE; s++) {
      const n = seq.id.length;
      seq.id.push(id());
      seq.ws.push(wsIds[w]!);
      seq.window.push(JSON.stringify(parseWindow(WINDOWS[n % WINDOWS.length]!)));
      seq.cap.push(n % 10 === 4 ? 400 : null);
      seq.step.push(id());
      const per = Math.max(1, Math.ceil(members.length / SEQUENCES_PER_WORKSPACE));
      pools.push(members.slice(s * per, s * per + per).length ? members.slice(s * per, s * per + per) : members);
    }
  }
  await sql`
    insert into sequence (id, workspace_id, key, name, send_window, settings, daily_cap)
    select u.id, u.ws, 'seq' || u.n, 'Seq ' || u.n, u.win::jsonb, '{"skipHolidays": true}'::jsonb, u.cap
    from unnest(${seq.id}::uuid[], ${seq.ws}::uuid[], ${seq.id.map((_, i) => i)}::int[], ${seq.window}::text[], ${seq.cap}::int[]) as u(id, ws, n, win, cap)`.execute(store.db);
  await sql`
    insert into step (id, sequence_id, key, position, kind)
    select u.id, u.seq, 'intro', 0, 'email' from unnest(${seq.step}::uuid[], ${seq.id}::uuid[]) as u(id, seq)`.execute(store.db);
  const smSeq: string[] = [];
  const smMb: string[] = [];
  pools.forEach((p, s) => p.forEach((i) => (smSeq.push(seq.id[s]!), smMb.push(mb.id[i]!))));
  await sql`insert into sequence_mailbox (sequence_id, mailbox_id) select * from unnest(${smSeq}::uuid[], ${smMb}::uuid[])`.execute(store.db);

  // Steps: leads, their enrollments and one queued send request each, due from 2 h ago to 10 h
  // ahead, spread unevenly over the pools (some mailboxes get twice their cap, some a few).
  await insertChunks(steps, 20_000, async (a, b) => {
    const lead = { id: [] as string[], email: [] as string[], zone: [] as string[], country: [] as Array<string | null> };
    const enr = { id: [] as string[], ws: [] as string[], seq: [] as string[], mb: [] as string[], step: [] as string[], zone: [] as string[] };
    const req = { id: [] as string[], due: [] as string[] };
    for (let i = a; i < b; i++) {
      const s = random.int(0, seq.id.length - 1);
      const pool = pools[s]!;
      const m = pool[Math.min(pool.length - 1, Math.floor(random.next() ** 1.5 * pool.length))]!;
      const region = REGIONS[m % REGIONS.length]!;
      const zone = random.int(0, 39) === 0 ? FAR[i % FAR.length]! : region.leads[random.int(0, region.leads.length - 1)]!;
      lead.id.push(id());
      lead.email.push(`lead${i}@company${i % 997}.test`);
      lead.zone.push(zone);
      lead.country.push(zone.startsWith('America') ? 'US' : zone === 'Europe/London' ? 'GB' : zone === 'Europe/Berlin' ? 'DE' : null);
      enr.id.push(id());
      enr.ws.push(seq.ws[s]!);
      enr.seq.push(seq.id[s]!);
      enr.mb.push(mb.id[m]!);
      enr.step.push(seq.step[s]!);
      enr.zone.push(zone);
      req.id.push(id());
      req.due.push(new Date(NOW - 2 * 3_600_000 + random.int(0, 12 * 3_600_000)).toISOString());
    }
    await sql`
      insert into lead (id, workspace_id, email, email_norm, time_zone, country)
      select u.id, u.ws, u.email, u.email, u.zone, u.country
      from unnest(${lead.id}::uuid[], ${enr.ws}::uuid[], ${lead.email}::text[], ${lead.zone}::text[], ${lead.country}::text[]) as u(id, ws, email, zone, country)`.execute(store.db);
    await sql`
      insert into enrollment (id, workspace_id, sequence_id, lead_id, mailbox_id, state, waiting_for, next_step_id, time_zone, zone_source)
      select u.id, u.ws, u.seq, u.lead, u.mb, 'active', 'send', u.step, u.zone, 'lead'
      from unnest(${enr.id}::uuid[], ${enr.ws}::uuid[], ${enr.seq}::uuid[], ${lead.id}::uuid[], ${enr.mb}::uuid[], ${enr.step}::uuid[], ${enr.zone}::text[])
        as u(id, ws, seq, lead, mb, step, zone)`.execute(store.db);
    await sql`
      insert into send_request (id, workspace_id, enrollment_id, step_id, mailbox_id, state, due_at)
      select u.id, u.ws, u.e, u.step, u.mb, 'queued', u.due
      from unnest(${req.id}::uuid[], ${enr.ws}::uuid[], ${enr.id}::uuid[], ${enr.step}::uuid[], ${enr.mb}::uuid[], ${req.due}::timestamptz[])
        as u(id, ws, e, step, mb, due)`.execute(store.db);
  });
  await sql`analyze`.execute(store.db);
  return { mailboxIds: mb.id, workspaces, sequences: seq.id.length };
}

function line(backend: string, what: string, r: PlanReport, seconds: number): void {
  console.log(
    `${backend.padEnd(8)} ${what}: ${int(r.requests)} requests of ${int(r.mailboxes)} mailboxes in ${seconds.toFixed(2)} s ` +
      `(${int(r.requests / seconds)} decisions/s; read ${(r.readMs / 1000).toFixed(2)} s, plan ${(r.planMs / 1000).toFixed(2)} s, write ${(r.writeMs / 1000).toFixed(2)} s); ` +
      `${int(r.planned)} planned, ${int(r.unplaced)} without a slot in the horizon, ${int(r.written)} rows written`,
  );
}

export default async function dispatchBench(args: string[]): Promise<Record<string, unknown>> {
  const mailboxes = Number(flag(args, 'mailboxes', '10000'));
  const steps = Number(flag(args, 'steps', '300000'));
  const seedValue = Number(flag(args, 'seed', '42'));
  const backends = flag(args, 'backends', 'pglite,postgres').split(',') as Array<'pglite' | 'postgres'>;
  if (!Number.isInteger(mailboxes) || mailboxes < 1 || !Number.isInteger(steps) || steps < 1) throw new Error('--mailboxes and --steps must be positive integers');
  const figures: Record<string, unknown> = { mailboxes, steps };
  for (const backend of backends) {
    const b = await benchStore(backend);
    try {
      const random = seededRandom(seedValue);
      const t0 = process.hrtime.bigint();
      const seeded = await seedDay(b.store, mailboxes, steps, random);
      const seedSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
      console.log(`${backend.padEnd(8)} seeded ${int(mailboxes)} mailboxes in ${seeded.workspaces} workspaces, ${seeded.sequences} sequences, ${int(steps)} queued steps in ${seedSeconds.toFixed(1)} s`);
      const clock = new SimClock(NOW);

      const t1 = process.hrtime.bigint();
      const first = await planMailboxes({ store: b.store, clock }, seeded.mailboxIds);
      const seconds = Number(process.hrtime.bigint() - t1) / 1e9;
      line(backend, 'plan', first, seconds);
      if (first.requests !== steps || first.planned + first.unplaced !== steps) throw new Error(`expected ${steps} decisions, got ${first.planned + first.unplaced}`);

      // The database's own check: no mailbox over its cap on any local date (ramp aside: at most daily_cap).
      const over = await sql<{ n: number }>`
        select count(*)::int as n from (
          select r.mailbox_id, (r.send_at at time zone m.time_zone)::date as d, count(*) as c, max(m.daily_cap) as cap
          from send_request r join mailbox m on m.id = r.mailbox_id
          where r.send_at is not null group by 1, 2) x
        where c > cap`.execute(b.store.db);
      if (over.rows[0]!.n !== 0) throw new Error(`${over.rows[0]!.n} mailbox-days over their cap`);
      const today = await sql<{ n: number; mb: number }>`
        select count(*)::int as n, count(distinct r.mailbox_id)::int as mb from send_request r join mailbox m on m.id = r.mailbox_id
        where (r.send_at at time zone m.time_zone)::date = date '2026-06-01'`.execute(b.store.db);
      console.log(`${backend.padEnd(8)} ${int(today.rows[0]!.n)} sends planned for Monday by ${int(today.rows[0]!.mb)} mailboxes; none over its cap on any local date (checked by the database)`);

      const t2 = process.hrtime.bigint();
      const second = await planMailboxes({ store: b.store, clock }, seeded.mailboxIds);
      const againSeconds = Number(process.hrtime.bigint() - t2) / 1e9;
      line(backend, 're-plan, nothing changed', second, againSeconds);

      // Claims: the first planned request of 1,000 mailboxes, reserved at its slot.
      const firsts = (
        await sql<{ id: string; at: Date }>`
          select distinct on (mailbox_id) id, send_at as at from send_request
          where send_at is not null order by mailbox_id, send_at limit 1000`.execute(b.store.db)
      ).rows;
      const lat: number[] = [];
      let granted = 0;
      for (const f of firsts) {
        const s0 = process.hrtime.bigint();
        const r = await b.store.db.transaction().execute((tx) => reserveSlot(tx, f.id, f.at.getTime()));
        lat.push(Number(process.hrtime.bigint() - s0) / 1e6);
        if (r.granted) granted++;
      }
      const p50 = percentile(lat, 50);
      const p99 = percentile(lat, 99);
      console.log(`${backend.padEnd(8)} reserveSlot: ${firsts.length} claims, ${granted} granted, median ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`);

      figures[`${backend}_seed_seconds`] = round(seedSeconds, 1);
      figures[`${backend}_plan_seconds`] = round(seconds, 2);
      figures[`${backend}_decisions_per_s`] = Math.round(steps / seconds);
      figures[`${backend}_read_seconds`] = round(first.readMs / 1000, 2);
      figures[`${backend}_plan_memory_seconds`] = round(first.planMs / 1000, 2);
      figures[`${backend}_write_seconds`] = round(first.writeMs / 1000, 2);
      figures[`${backend}_planned`] = first.planned;
      figures[`${backend}_unplaced`] = first.unplaced;
      figures[`${backend}_planned_monday`] = today.rows[0]!.n;
      figures[`${backend}_replan_seconds`] = round(againSeconds, 2);
      figures[`${backend}_replan_written`] = second.written;
      figures[`${backend}_reserve_p50_ms`] = round(p50, 2);
      figures[`${backend}_reserve_p99_ms`] = round(p99, 2);
    } finally {
      await b.drop();
    }
  }
  if (typeof figures.postgres_plan_seconds === 'number') figures.postgres_target_met = (figures.postgres_plan_seconds as number) < 60 * (steps / 300_000);
  return figures;
}

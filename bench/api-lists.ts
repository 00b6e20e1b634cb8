/**
 * API list latency: the inbox and leads list endpoints with 100k leads and 50k inbound messages in
 * one workspace (issue 5's target: p99 under 100 ms on PostgreSQL).
 *
 *   npm run bench -- api-lists [--backend=postgres|pglite] [--leads=100000] [--messages=50000] [--requests=200]
 *
 * Requests go through Fastify's inject (the full route: authentication, membership, validation,
 * query, serialisation), not over a socket, so the figures leave out the network. Data is written
 * with set-based SQL; a member owns half of the 10 mailboxes, so the own-inbox filter is measured.
 */
import { sql } from 'kysely';
import { systemClock } from '../src/common/clock.ts';
import { newId } from '../src/common/ids.ts';
import { seededRandom, type Random } from '../src/common/random.ts';
import { addMembership } from '../src/api/auth/accounts.ts';
import { hashPassword } from '../src/api/auth/passwords.ts';
import { createSession, SESSION_COOKIE } from '../src/api/auth/sessions.ts';
import { defaultAuthSettings } from '../src/api/context.ts';
import { buildServer } from '../src/api/server.ts';
import type { Store } from '../src/store/store.ts';
import { round } from './lib/format.ts';
import { percentile } from './lib/stats.ts';
import { benchStore, flag } from './support/backends.ts';

export default async function (args: string[]): Promise<Record<string, unknown>> {
  const backend = flag(args, 'backend', 'postgres') as 'postgres' | 'pglite';
  const nLeads = Number(flag(args, 'leads', '100000'));
  const nMessages = Number(flag(args, 'messages', '50000'));
  const nRequests = Number(flag(args, 'requests', '200'));
  const { store, drop } = await benchStore(backend);
  const random = seededRandom('api-lists');
  try {
    const t0 = Date.now();
    const { workspaceId, people } = await seedInboxWorkspace(store, { leads: nLeads, messages: nMessages }, random);
    const seedMs = Date.now() - t0;
    console.log(`seeded ${nLeads} leads and ${nMessages} messages on ${backend} in ${seedMs} ms`);

    const app = buildServer({ store, clock: systemClock, version: 'bench', api: { random, publicUrl: 'http://localhost', ...defaultAuthSettings } });
    await app.ready();
    const cookieOf = async (accountId: string) => `${SESSION_COOKIE}=${(await createSession(store.db, accountId, systemClock, 3_600_000)).token}`;
    const owner = await cookieOf(people[0]!.accountId);
    const rep = await cookieOf(people[1]!.accountId);
    const base = `/api/workspaces/${workspaceId}`;
    // A cursor 20 pages deep, to show that depth costs nothing with keyset pagination.
    const cursorAt21 = async (list: string) => {
      let cursor: string | null = null;
      for (let i = 0; i < 20; i++) {
        const page: { json(): unknown } = await app.inject({ method: 'GET', url: `${base}/${list}?limit=50${cursor ? `&cursor=${cursor}` : ''}`, headers: { cookie: owner } });
        cursor = (page.json() as { nextCursor: string | null }).nextCursor;
      }
      return cursor;
    };
    const deep = await cursorAt21('inbox');
    const deepLeads = await cursorAt21('leads');
    const cases: Array<[string, string, string]> = [
      ['inbox_first_page', `${base}/inbox?limit=50`, owner],
      ['inbox_page_21', `${base}/inbox?limit=50&cursor=${deep}`, owner],
      ['inbox_review_queue', `${base}/inbox?limit=50&needsReview=true`, owner],
      ['inbox_member_own', `${base}/inbox?limit=50`, rep],
      ['leads_first_page', `${base}/leads?limit=50`, owner],
      ['leads_page_21', `${base}/leads?limit=50&cursor=${deepLeads}`, owner],
      ['leads_search', `${base}/leads?limit=50&search=company%204242`, owner],
      // ~2,200 matches (Company 42, 420…429, 4200…4299): the count and the order by time both matter.
      ['leads_search_broad', `${base}/leads?limit=50&search=company%2042`, owner],
    ];
    const out: Record<string, unknown> = { backend, leads: nLeads, messages: nMessages, requests: nRequests, seed_ms: seedMs };
    for (const [name, url, cookie] of cases) {
      const ms: number[] = [];
      for (let i = 0; i < nRequests; i++) {
        const t = process.hrtime.bigint();
        const r = await app.inject({ method: 'GET', url, headers: { cookie } });
        ms.push(Number(process.hrtime.bigint() - t) / 1e6);
        if (r.statusCode !== 200) throw new Error(`${name}: ${r.statusCode} ${r.body.slice(0, 200)}`);
      }
      const [p50, p99, max] = [percentile(ms, 50), percentile(ms, 99), Math.max(...ms)];
      console.log(`${name.padEnd(20)} p50 ${p50.toFixed(1)} ms  p99 ${p99.toFixed(1)} ms  max ${max.toFixed(1)} ms`);
      Object.assign(out, { [`${name}_p50_ms`]: round(p50), [`${name}_p99_ms`]: round(p99), [`${name}_max_ms`]: round(max) });
    }
    await app.close();
    return out;
  } finally {
    await drop();
  }
}

export const BENCH_PASSWORD = 'bench password 1';

export interface InboxWorkspace {
  workspaceId: string;
  /** The owner (index 0) and a member (index 1), each owning half of the 10 mailboxes. */
  people: Array<{ accountId: string; email: string; userId: string }>;
  mailboxIds: string[];
}

/**
 * One workspace with n.leads leads and n.messages inbound messages spread over 10 mailboxes, written
 * with set-based SQL (PostgreSQL's gen_random_uuid and generate_series); the owner and the member sign in with BENCH_PASSWORD. Shared with bench/web-inbox.ts.
 */
export async function seedInboxWorkspace(store: Store, n: { leads: number; messages: number }, random: Random): Promise<InboxWorkspace> {
  const id = () => newId(systemClock.now(), random);
  const nLeads = n.leads;
  const nMessages = n.messages;
  const workspaceId = id();
  await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Bench' }).execute();
  const people: InboxWorkspace['people'] = [];
  for (const [email, role] of [['owner@bench.test', 'owner'], ['rep@bench.test', 'member']] as const) {
    const accountId = id();
    await store.db.insertInto('account').values({ id: accountId, email, name: null, password_hash: await hashPassword(BENCH_PASSWORD) }).execute();
    people.push({ accountId, email, userId: await addMembership(store.db, { clock: systemClock, random }, { accountId, workspaceId, email, name: null, role }) });
  }
  const mailboxIds = Array.from({ length: 10 }, () => id());
  for (const [i, m] of mailboxIds.entries()) {
    await store.db.insertInto('mailbox').values({ id: m, workspace_id: workspaceId, user_id: i % 2 ? people[1]!.userId : people[0]!.userId, email: `rep${i}@bench.test`, provider: 'smtp_imap' }).execute();
  }
  await sql`
    insert into lead (id, workspace_id, email, email_norm, first_name, last_name, company, created_at)
    select gen_random_uuid(), ${workspaceId}, 'lead' || g || '@co' || (g % 5000) || '.test', 'lead' || g || '@co' || (g % 5000) || '.test',
           'First' || g, 'Last' || g, 'Company ' || (g % 5000), now() - (g || ' seconds')::interval
    from generate_series(1, ${nLeads}) g`.execute(store.db);
  await sql`
    insert into message (id, workspace_id, mailbox_id, direction, message_id, subject, from_addr, at, folder, label, confidence, action, needs_review, excerpt)
    select gen_random_uuid(), ${workspaceId}, (${mailboxIds}::uuid[])[1 + g % 10], 'inbound', '<m' || g || '@co.test>', 'Re: hello ' || g,
           'lead' || g || '@co.test', now() - (g * 37 || ' seconds')::interval, 'inbox', 'human_reply', 0.9, 'reply', g % 20 = 0, 'Thanks, interested'
    from generate_series(1, ${nMessages}) g`.execute(store.db);
  await sql`analyze`.execute(store.db);
  return { workspaceId, people, mailboxIds };
}

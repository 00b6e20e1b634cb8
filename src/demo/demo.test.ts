import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { PLACEMENT_REASON_PREFIX } from '../warmup/placement/assess.ts';
import { formatProgress } from './progress.ts';
import { assertStoreFreeForDemo, startDemo, type DemoRun } from './run-demo.ts';

/**
 * A short demo on PGlite: 30 leads, four simulated hours per real second. Everything that happens
 * is done by the real parts: the scheduler fires steps, the senders send through the Gmail and
 * Graph emulators, the simulated prospects answer by mail into the emulated inboxes, and the sync
 * pool and the ingestion pipeline turn that mail into replies, bounces, out-of-office pauses and
 * unsubscribes. The warmup network runs beside it: the reps and four peers of other workspaces
 * write to each other, the receivers rescue warmup mail from junk and answer some, and the hourly
 * placement pass judges them. The test waits
 * (bounded for a loaded 2-core machine) until each kind was seen.
 */
const RATE = 4 * 3600;
const BOUND_MS = 180_000;

describe('cadenza demo (short run on PGlite)', () => {
  let store: TestStore;
  let run: DemoRun | undefined;

  beforeAll(async () => {
    store = await freshStore('pglite');
  });
  afterAll(async () => {
    await run?.stop();
    await store?.destroy();
  });

  const one = async <T>(q: ReturnType<typeof sql<T>>) => (await q.execute(store.db)).rows;

  it('sends through the emulators; replies, a bounce, an out-of-office and an unsubscribe come back by mail and act on their enrollments', async () => {
    run = await startDemo({ store, leads: 30, rate: RATE, seed: 'demo-test' });
    const ws = run.workspaceId;
    const seen = { reply: false, bounce: false, paused: false, unsubscribe: false, warmupSent: false, warmupRescued: false, warmupAnswered: false };
    const deadline = Date.now() + BOUND_MS;
    while (Date.now() < deadline && !Object.values(seen).every(Boolean)) {
      await new Promise((r) => setTimeout(r, 300));
      const byAction = await one<{ action: string; state: string; state_reason: string | null; email_norm: string; reason: string | null }>(sql`
        select m.action, e.state, e.state_reason, l.email_norm, s.reason
        from message m join enrollment e on e.id = m.enrollment_id join lead l on l.id = e.lead_id
        left join suppression s on s.workspace_id = l.workspace_id and s.email_norm = l.email_norm
        where m.workspace_id = ${ws} and m.direction = 'inbound'`);
      seen.reply ||= byAction.some((x) => x.action === 'reply' && x.state === 'replied');
      seen.bounce ||= byAction.some((x) => x.action === 'hard_bounce' && x.state === 'bounced' && x.reason === 'hard_bounce');
      // Paused while it is observed: the return date is a day or two ahead on the demo clock.
      seen.paused ||= byAction.some((x) => x.action === 'out_of_office' && x.state === 'paused' && /out of office/i.test(x.state_reason ?? ''));
      seen.unsubscribe ||= byAction.some((x) => x.action === 'unsubscribe' && x.state === 'unsubscribed' && x.reason === 'unsubscribe');
      // Warmup: the planned mail sent and received (its placement recorded), one from junk, and a
      // reply planned by a receiver (sent like any warmup mail; on a loaded machine at this speed
      // a claim can lag the 6 hours after which a warmup mail is dropped, so sending it is not awaited).
      const warm = await one<{ kind: string; sent: boolean; folder: string | null }>(sql`select kind, sent_at is not null as sent, received_folder as folder from warmup_mail`);
      seen.warmupSent ||= warm.some((w) => w.kind === 'first' && w.sent && w.folder === 'inbox');
      seen.warmupRescued ||= warm.some((w) => w.sent && w.folder === 'junk');
      seen.warmupAnswered ||= warm.some((w) => w.kind === 'reply');
    }
    const progress = await run.progress();
    console.log(`${formatProgress(progress)}\nreactions delivered: ${JSON.stringify(run.reactions)}`);
    await run.stop();
    console.log(`warmup delivered: ${JSON.stringify(run.warmupDelivered)}`);
    expect(seen).toEqual({ reply: true, bounce: true, paused: true, unsubscribe: true, warmupSent: true, warmupRescued: true, warmupAnswered: true });

    // Warmup: planned by the role, four reps and four peers in the pool; its mail never an inbound
    // message (inbox, analytics), and the reps' placement readable as the warmup panel reads it.
    expect(run.network).toHaveLength(8);
    expect((await one<{ n: number }>(sql`select count(*)::int as n from warmup_plan_day where sends > 0`))[0]!.n).toBeGreaterThan(0);
    const warmIds = (await one<{ message_id: string }>(sql`select message_id from warmup_mail where received_at is not null`)).map((w) => w.message_id);
    expect(warmIds.length).toBeGreaterThan(0);
    expect((await one<{ n: number }>(sql`select count(*)::int as n from message where message_id = any(${warmIds})`))[0]!.n).toBe(0);
    const rescued = await one<{ id: string }>(sql`select id from warmup_mail where received_folder = 'junk'`);
    expect(rescued.length).toBeGreaterThan(0);
    // The hourly placement pass ran on the demo's clock, judging every member of the pool.
    expect(run.placement.passes).toBeGreaterThan(1);
    expect(run.placement.last?.map((r) => r.mailboxId).sort()).toEqual(run.network.map((m) => m.id).sort());
    expect(run.placement.last?.every((r) => r.reason.startsWith(PLACEMENT_REASON_PREFIX))).toBe(true);

    // Every send went through an emulator's API and is in the rep's Sent folder there, once.
    const sent = await one<{ message_id: string }>(sql`select message_id from send_request where workspace_id = ${ws} and state = 'sent'`);
    expect(sent.length).toBeGreaterThan(0);
    const gmailSent = run.workspace.mailboxes
      .filter((m) => m.provider === 'gmail')
      .flatMap((m) => [...run!.providers.gmail.mailbox(m.email).messages.values()].filter((x) => x.labelIds.has('SENT')).map((x) => x.parsed.messageId));
    const graphSent = run.workspace.mailboxes
      .filter((m) => m.provider === 'graph')
      .flatMap((m) => run!.providers.graph.mailbox(m.email).messages.filter((x) => x.folder === 'sentitems').map((x) => x.internetMessageId));
    expect(gmailSent.length).toBeGreaterThan(0);
    expect(graphSent.length).toBeGreaterThan(0);
    // The reps' warmup mail is in their Sent folders too, sent through the same connectors.
    const warmupSent = new Set<string | null>((await one<{ message_id: string }>(sql`select message_id from warmup_mail where sent_at is not null`)).map((w) => w.message_id));
    expect([...gmailSent, ...graphSent].filter((id) => !warmupSent.has(id)).sort()).toEqual(sent.map((x) => x.message_id).sort());
    expect([...gmailSent, ...graphSent].some((id) => warmupSent.has(id))).toBe(true);
    expect(run.providers.gmail.requests.some((r) => r.route === 'messages.send' && r.outcome === 200)).toBe(true);
    expect(run.providers.graph.requests.some((r) => r.route === 'sendMail' && r.outcome === 202)).toBe(true);

    // Never after a stop: an enrollment stopped by mail has nothing queued, and nothing was sent
    // after the message that stopped it arrived.
    const late = await one<{ n: number }>(sql`
      select count(*)::int as n from enrollment e
      join message m on m.enrollment_id = e.id and m.direction = 'inbound' and m.action in ('reply', 'hard_bounce', 'unsubscribe')
      join send_request r on r.enrollment_id = e.id
      where e.workspace_id = ${ws} and (r.state in ('queued', 'in_flight') or (r.state = 'sent' and r.claimed_at > m.received_at))`);
    expect(late[0]!.n).toBe(0);

    // A second demo beside a live one is refused (its clock would fire the first one's steps early);
    // once retired, the store is free again, and nothing of the first is left running.
    await expect(startDemo({ store, leads: 5 })).rejects.toMatchObject({ code: 'CONFLICT' });
    await run.retire();
    await expect(assertStoreFreeForDemo(store)).resolves.toBeUndefined();
    const live = await one<{ n: number }>(sql`select count(*)::int as n from enrollment where workspace_id = ${ws} and state in ('active', 'paused')`);
    expect(live[0]!.n).toBe(0);
  }, BOUND_MS + 60_000);
});

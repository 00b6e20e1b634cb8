import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { systemClock } from '../../src/common/clock.ts';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { SyncPool } from '../../src/ingest/worker/sync-pool.ts';
import { GmailSync } from '../../src/mailbox/sync/gmail-sync.ts';
import { PushRegistry } from '../../src/mailbox/sync/push-registry.ts';
import { gmailPushRoutes } from '../../src/mailbox/sync/push-routes.ts';
import { localKeyWrapper, Vault } from '../../src/mailbox/vault.ts';
import { EnrollmentService } from '../../src/sequence/enrollment-service.ts';
import { startGmailEmulator } from '../../src/sim/emulators/gmail/emulator.ts';
import type { Store } from '../../src/store/store.ts';
import { replyMail, seedSentSequence } from '../ingest/seed-sent-sequence.ts';

/**
 * The noisy neighbour, on the production sync path: one sync role (SyncPool: leases, the connect
 * gate, the prepare worker pool, the pipeline's transactions) serves two workspaces of Gmail
 * mailboxes on the emulator (the real GmailSync connector, users.watch, Pub/Sub push to the push
 * route on loopback). Workspace "noisy" has just connected `noisyMailboxes` mailboxes, each with
 * `historyPerMailbox` messages in its inbox: their first syncs flood the gate and the parse
 * workers. Workspace "quiet" has one mailbox with sequences out; once its first sync is done (how
 * long that took under the flood is a figure of its own), while the flood runs, its prospects reply, one every `replyGapMs`, and each reply is timed from its delivery to the
 * emulator to the commit of the batch that stopped its enrollment (promise 3's figure).
 *
 * With `noisyMailboxes: 0` the same replies are timed with no flood: the anchor.
 */
export interface NoisyOptions {
  store: Store;
  noisyMailboxes: number;
  historyPerMailbox: number;
  replies: number;
  replyGapMs: number;
  /** The sync role's connect gate (default 8: small, so that the flood queues at it). */
  connectConcurrency?: number;
}

export interface NoisyResult {
  /** From the pool's start to the quiet mailbox's first sync committed (ms). */
  quietReadyMs: number;
  /** Each quiet reply, delivery to its stop committed (ms), in delivery order. */
  replyToStopMs: number[];
  /** Replies delivered while the noisy workspace's first syncs were still being ingested. */
  repliesDuringFlood: number;
  /** Noisy messages ingested, and how long the whole flood took (ms from the pool's start). */
  floodIngested: number;
  floodMs: number;
  /** Every quiet enrollment that was replied to ended `replied`. */
  allStopped: boolean;
}

const QUIET = 'rep@quiet-workspace.test';
const noisyUser = (i: number) => `rep${i}@noisy-workspace.test`;

/** Ordinary inbound mail for the flood: a notification with an HTML part, as a CRM or a tool sends. */
function floodMail(to: string, i: number, tag: string): Buffer {
  const rows = Array.from({ length: 12 }, (_, r) => `<tr><td>Item ${r}</td><td>${(i * 37 + r * 11) % 997} units</td><td>updated</td></tr>`).join('');
  const body = [
    `From: Notifications <notify${i % 7}@tools.test>`,
    `To: ${to}`,
    `Subject: Weekly summary ${i} (${tag})`,
    `Message-ID: <flood-${i}-${tag}@tools.test>`,
    `Date: ${new Date().toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Your weekly summary ${i}: 12 items updated. View them in the dashboard.`,
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    '',
    `<html><body><p>Your weekly summary ${i}</p><table>${rows}</table><p><a href="https://tools.test/d/${i}">Open the dashboard</a></p></body></html>`,
    '--b1--',
    '',
  ];
  return Buffer.from(body.join('\r\n'));
}

export async function runNoisyNeighbour(o: NoisyOptions): Promise<NoisyResult> {
  const { store } = o;
  const tag = randomBytes(4).toString('hex');
  const registry = new PushRegistry();
  const api: FastifyInstance = Fastify();
  await api.register(gmailPushRoutes, { registry, verificationToken: tag });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(api.server.address() as { port: number }).port}`;
  const users = [QUIET, ...Array.from({ length: o.noisyMailboxes }, (_, i) => noisyUser(i))];
  const gmail = await startGmailEmulator({ users, pushMinIntervalMs: 0 });
  gmail.pubsub.createPushSubscription({ topic: 'projects/nn/topics/gmail', name: 'projects/nn/subscriptions/cadenza', pushEndpoint: `${origin}/push/gmail?token=${tag}` });
  const service = new EnrollmentService({ store, clock: systemClock, random: seededRandom(`nn-${tag}`) });
  let pool: SyncPool | undefined;
  try {
    // The noisy workspace first, so that its mailboxes come first in every id order.
    const noisyIds: string[] = [];
    if (o.noisyMailboxes > 0) {
      const noisy = await seedSentSequence(store, { clock: systemClock, random: seededRandom(`noisy-${tag}`), service }, { mailboxEmail: noisyUser(0), leads: [`lead.${tag}@noisy-prospects.test`], tag: `n${tag}`, provider: 'gmail' });
      noisyIds.push(noisy.mailboxId);
      const rest = Array.from({ length: o.noisyMailboxes - 1 }, (_, k) => ({ id: newId(Date.now(), seededRandom(`${tag}-${k}`)), workspace_id: noisy.workspaceId, email: noisyUser(k + 1), provider: 'gmail' as const, settings: '{}', time_zone: 'UTC' }));
      for (let i = 0; i < rest.length; i += 500) await store.db.insertInto('mailbox').values(rest.slice(i, i + 500)).execute();
      noisyIds.push(...rest.map((r) => r.id));
      let n = 0;
      for (let u = 0; u < o.noisyMailboxes; u++) for (let k = 0; k < o.historyPerMailbox; k++) await gmail.deliver(noisyUser(u), floodMail(noisyUser(u), n++, tag));
    }
    const leads = Array.from({ length: o.replies }, (_, i) => `p${i}.${tag}@quiet-prospects.test`);
    const quiet = await seedSentSequence(store, { clock: systemClock, random: seededRandom(`quiet-${tag}`), service }, { mailboxEmail: QUIET, leads, tag: `q${tag}`, provider: 'gmail' });

    const noisySet = new Set(noisyIds);
    const floodTotal = o.noisyMailboxes * o.historyPerMailbox;
    let floodIngested = 0;
    let floodDoneAt = 0;
    const seen = new Map<string, (at: number) => void>();
    const vault = new Vault(store, localKeyWrapper(randomBytes(32)));
    const tokens = new Map(users.map((u) => [u, gmail.tokenSource(u)]));
    const startedAt = Date.now();
    pool = new SyncPool({
      store,
      service,
      clock: systemClock,
      random: seededRandom(`pool-${tag}`),
      vault,
      mailboxIds: [...noisyIds, quiet.mailboxId],
      reconcileMs: 60_000,
      leaseTtlMs: 60_000,
      connectConcurrency: o.connectConcurrency ?? 8,
      connectorFor: (mb) => new GmailSync({ baseUrl: gmail.baseUrl, tokens: tokens.get(mb.email)!, timeoutMs: 30_000, push: { topicName: 'projects/nn/topics/gmail', registry } }),
      onBatch: (mailboxId, report) => {
        const at = Date.now();
        if (noisySet.has(mailboxId)) {
          floodIngested += report.messages.length;
          if (floodIngested >= floodTotal && !floodDoneAt) floodDoneAt = at;
          return;
        }
        for (const m of report.messages) seen.get(m.messageId)?.(at);
      },
    });
    await pool.start();
    // The quiet mailbox's first sync (its cursor stored) comes first: replies to a mailbox not yet
    // synced wait for that, and that wait is its own figure (the gate's turn decides it).
    const cursor = async () => (await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', quiet.mailboxId).executeTakeFirst())?.cursor ?? null;
    for (let i = 0; i < 1200 && (await cursor()) === null; i++) await new Promise((r) => setTimeout(r, 50));
    const quietReadyMs = Date.now() - startedAt;
    // One ordinary message first, waited for: the parse workers load their code on their first
    // message (about 2 s here), a cost a running process has long paid, not a reply's.
    const warm = `<nn-warm-${tag}@quiet-prospects.test>`;
    const warmed = new Promise<void>((resolve) => seen.set(warm, () => resolve()));
    await gmail.deliver(QUIET, Buffer.from(replyMail({ from: `colleague.${tag}@quiet-workspace.test`, to: QUIET, subject: 'Lunch?', body: 'Lunch at noon?', messageId: warm })));
    await Promise.race([warmed, new Promise((r) => setTimeout(r, 60_000))]);

    const replyToStopMs: number[] = [];
    let repliesDuringFlood = 0;
    const waits: Array<Promise<void>> = [];
    for (let i = 0; i < o.replies; i++) {
      const send = quiet.sends[i]!;
      const messageId = `<nn-reply-${i}-${tag}@quiet-prospects.test>`;
      const arrived = new Promise<number>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`reply ${i} was not ingested within 120 s`)), 120_000);
        seen.set(messageId, (at) => {
          clearTimeout(t);
          resolve(at);
        });
      });
      const t0 = Date.now();
      if (floodIngested < floodTotal) repliesDuringFlood++;
      await gmail.deliver(QUIET, Buffer.from(replyMail({ from: send.leadEmail, to: QUIET, inReplyTo: send.messageId, subject: `Re: ${send.subject}`, body: 'Yes, send me the details.', messageId })));
      waits.push(arrived.then((at) => void (replyToStopMs[i] = at - t0)));
      await new Promise((r) => setTimeout(r, o.replyGapMs));
    }
    await Promise.all(waits);
    // The flood's end, for the figure (bounded: a flood that never ends is the test's failure to report).
    for (let i = 0; i < 2400 && floodIngested < floodTotal; i++) await new Promise((r) => setTimeout(r, 50));
    const states = await store.db.selectFrom('enrollment').select('state').where('id', 'in', quiet.sends.map((s) => s.enrollmentId)).execute();
    return {
      quietReadyMs,
      replyToStopMs,
      repliesDuringFlood,
      floodIngested,
      floodMs: (floodDoneAt || Date.now()) - startedAt,
      allStopped: states.length === o.replies && states.every((s) => s.state === 'replied'),
    };
  } finally {
    await pool?.stop();
    await gmail.close();
    await api.close();
  }
}

import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { createLogger } from '../common/logger.ts';
import { seededRandom } from '../common/random.ts';
import { openMasterKey } from '../mailbox/master-key.ts';
import { replyMail, seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { pushSettingsFrom } from '../mailbox/sync/push-settings.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { startGmailEmulator, type GmailEmulator } from '../sim/emulators/gmail/emulator.ts';
import { startGraphEmulator, type GraphEmulator } from '../sim/emulators/graph/emulator.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { startApp, type RunningApp } from './app.ts';

/**
 * `cadenza start` with push configured, through the Gmail and Graph emulators: a reply delivered
 * to the provider is pushed (Pub/Sub push, Graph change notification) to the process that runs
 * the api role, which wakes the sync loop of the mailbox's owner, and the enrollment stops long
 * before the 15-minute reconciliation poll could have found it. On PostgreSQL the api and sync
 * roles run in two app instances, so the push crosses between them through LISTEN/NOTIFY; on the
 * embedded store both roles share one process and one registry.
 */
const TOPIC = 'projects/cadenza-test/topics/gmail';
const SECRET = randomBytes(24).toString('base64url');
const modes = [
  ...(testBackends().includes('postgres') ? [{ name: 'api and sync in two processes on PostgreSQL (LISTEN/NOTIFY)', split: true }] : []),
  { name: 'api and sync in one process on the embedded store', split: false },
];

describe.each(modes)('push wiring: $name', ({ split }) => {
  const tag = randomBytes(4).toString('hex');
  const GMAIL = `rep-${tag}@gmail-push.test`;
  const GRAPH = `rep-${tag}@graph-push.test`;
  const log = createLogger({ level: 'silent' });
  let dir: string;
  let db: TestStore | undefined;
  let api: RunningApp;
  let sync: RunningApp;
  let gmail: GmailEmulator;
  let graph: GraphEmulator;
  let g: Seeded;
  let m: Seeded;

  const cursor = async (mailboxId: string) =>
    (await api.store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', mailboxId).executeTakeFirst())?.cursor as { historyId?: string; folders?: object } | undefined;
  const state = async (id: string) => (await api.store.db.selectFrom('enrollment').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-push-'));
    gmail = await startGmailEmulator({ users: [GMAIL], pushMinIntervalMs: 0 });
    graph = await startGraphEmulator({ users: [GRAPH] });
    if (split) db = await freshStore('postgres');
    // The api's port is chosen first: the sync side subscribes Graph with its URL. Over http on
    // loopback here, so the notification URL is given, not derived (derived only from https).
    const port = await freePort();
    const common = { dataDir: dir, host: '127.0.0.1', log, providerBaseUrls: { gmail: gmail.baseUrl, graph: graph.baseUrl } };
    const settings = { ...pushSettingsFrom({ CADENZA_PUSH_SECRET: SECRET, CADENZA_GMAIL_PUBSUB_TOPIC: TOPIC, CADENZA_PUBLIC_URL: `http://127.0.0.1:${port}` })!, graphNotificationUrl: `http://127.0.0.1:${port}/push/graph` };
    // Seeded before any sync role starts, so the first balance takes both mailboxes.
    const seeder = split ? undefined : await startApp({ ...common, port: 0, roles: [] });
    api = seeder ?? (await startApp({ ...common, port, databaseUrl: db!.url, roles: ['api'], push: settings }));
    gmail.pubsub.createPushSubscription({ topic: TOPIC, name: 'projects/cadenza-test/subscriptions/cadenza', pushEndpoint: `http://127.0.0.1:${port}/push/gmail?token=${SECRET}` });

    const service = new EnrollmentService({ store: api.store, clock: systemClock, random: seededRandom(tag) });
    const leads = (p: string) => [0, 1].map((i) => `${p}${i}.${tag}@prospects.test`);
    g = await seedSentSequence(api.store, { clock: systemClock, random: seededRandom(`g${tag}`), service }, { mailboxEmail: GMAIL, leads: leads('g'), tag: `g${tag}`, provider: 'gmail' });
    m = await seedSentSequence(api.store, { clock: systemClock, random: seededRandom(`m${tag}`), service }, { mailboxEmail: GRAPH, leads: leads('m'), tag: `m${tag}`, provider: 'graph' });
    const vault = new Vault(api.store, localKeyWrapper(await openMasterKey(api.store, { dataDir: dir })));
    const expiresAt = Date.now() + 3_600_000;
    await vault.put(g.workspaceId, g.mailboxId, { kind: 'oauth', accessToken: gmail.tokenSource(GMAIL).current, refreshToken: 'unused', expiresAt });
    await vault.put(m.workspaceId, m.mailboxId, { kind: 'oauth', accessToken: graph.tokenSource(GRAPH).current, refreshToken: 'unused', expiresAt });

    if (split) {
      sync = await startApp({ ...common, port: 0, databaseUrl: db!.url, roles: ['sync'], push: settings });
      expect(api.syncs).toBeUndefined();
      expect(sync.server).toBeUndefined();
    } else {
      // The embedded store is a folder: the seeding instance hands it over to the real one.
      await seeder!.stop();
      api = sync = await startApp({ ...common, port, roles: ['api', 'sync'], push: settings });
    }
    // Watching and first pulls done: both cursors whole.
    for (let i = 0; i < 600; i++) {
      const [cg, cm] = [await cursor(g.mailboxId), await cursor(m.mailboxId)];
      if (cg?.historyId && Object.keys(cm?.folders ?? {}).length === 2) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(await cursor(g.mailboxId)).toMatchObject({ historyId: expect.any(String) });
    expect(Object.keys((await cursor(m.mailboxId))?.folders ?? {})).toHaveLength(2);
  }, 90_000);

  afterAll(async () => {
    if (sync !== api) await sync?.stop();
    await api?.stop();
    await gmail?.close();
    await graph?.close();
    await db?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const provider of ['gmail', 'graph'] as const) {
    it(`${provider}: a reply is pushed to the api role and stops its enrollment in seconds (the poll is 15 minutes)`, async () => {
      const seeded = provider === 'gmail' ? g : m;
      const rep = provider === 'gmail' ? GMAIL : GRAPH;
      const x = seeded.sends[0]!;
      const raw = replyMail({ from: x.leadEmail, to: rep, inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Sounds good, call me.', messageId: `<push-${provider}-${tag}@prospects.test>` });
      const pushesBefore = (provider === 'gmail' ? gmail.push : graph.push).log.length;
      const t0 = Date.now();
      if (provider === 'gmail') await gmail.deliver(rep, Buffer.from(raw));
      else await graph.deliver(rep, Buffer.from(raw), { folder: 'inbox' });
      while ((await state(x.enrollmentId)) !== 'replied' && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 20));
      const took = Date.now() - t0;
      expect(await state(x.enrollmentId)).toBe('replied');
      const pushes = (provider === 'gmail' ? gmail.push : graph.push).log.slice(pushesBefore);
      expect(pushes.length).toBeGreaterThanOrEqual(1);
      expect(pushes.every((p) => p.url.startsWith(api.url!))).toBe(true);
      expect(pushes[0]!.attempts[0]).toBe(provider === 'gmail' ? 204 : 202);
      console.log(`${split ? 'two processes' : 'one process'}, ${provider}: delivery -> push -> pull -> replied in ${took} ms`);
    }, 30_000);
  }

  it('refuses a Gmail push without the secret, and ignores a Graph notification with a forged clientState', async () => {
    const body = { message: { data: Buffer.from(JSON.stringify({ emailAddress: GMAIL, historyId: '1' })).toString('base64'), messageId: '1' }, subscription: 'x' };
    const no = await fetch(`${api.url}/push/gmail?token=wrong`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(no.status).toBe(403);
    const forged = await fetch(`${api.url}/push/graph`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: [{ clientState: `${m.mailboxId}.${'A'.repeat(43)}`, subscriptionId: 'x', changeType: 'created' }] }),
    });
    expect(forged.status).toBe(202);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

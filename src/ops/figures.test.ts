import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../../test/api.ts';
import { freshStore, testBackends } from '../../test/stores.ts';
import { addMembership } from '../api/auth/accounts.ts';
import { hashPassword } from '../api/auth/passwords.ts';
import { defaultAuthSettings } from '../api/context.ts';
import { buildServer } from '../api/server.ts';
import { embeddedDbDir } from '../common/config.ts';
import { newId } from '../common/ids.ts';
import { seededRandom } from '../common/random.ts';
import { readProgress } from '../demo/progress.ts';
import { parseMail } from '../ingest/parse/parse-mail.ts';
import { ingestBatch, type IngestDeps } from '../ingest/pipeline.ts';
import { replyMail, seedSentSequence, type Seeded } from '../../test/ingest/seed-sent-sequence.ts';
import type { Classification } from '../ingest/types.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { migrate } from '../store/migrate.ts';
import { openStore, type Store } from '../store/store.ts';
import { MAX_STOP_LATENCY_MS, nearestRank } from './figures.ts';
import { Metrics } from './metrics.ts';

const root = join(import.meta.dirname, '..', '..');
const enc = (s: string) => new TextEncoder().encode(s);
const DAY = 86_400_000;

it('ranks percentiles by nearest rank, exactly for integer percentiles', () => {
  expect(nearestRank(2, 50)).toBe(1);
  expect(nearestRank(5, 50)).toBe(3);
  expect(nearestRank(5, 90)).toBe(5);
  expect(nearestRank(10, 90)).toBe(9);
  // 0.07 × 100 is 7.000000000000001 in floating point: the 7th value, not the 8th.
  expect(nearestRank(100, 7)).toBe(7);
  expect(nearestRank(101, 99)).toBe(100);
  expect(nearestRank(1, 1)).toBe(1);
});

/**
 * Issue 12: reply-to-stop was an HDR histogram on /metrics (every stop or pause, to the commit) and
 * a stored figure on the API (human replies only, to the transaction's start), and "sent" and
 * "replied" were counted five ways. One scenario through the real pipeline; /metrics, the
 * analytics API, `cadenza status` (the real command) and the demo's progress read the same counts
 * and percentiles from it.
 */
describe.each(testBackends())('one definition of each figure (%s)', (backend) => {
  // Today's UTC noon: `cadenza status` reads the system clock, and its window must hold the scenario's day.
  const clock = new SimClock(Math.floor(Date.now() / DAY) * DAY + DAY / 2);
  const random = seededRandom(`figures-${backend}`);
  const metrics = new Metrics();
  const verdicts = new Map<string, Classification>();
  const human: Classification = { label: 'human_reply', confidence: 0.9, reason: 'test: a person wrote it', rung: 'default' };
  let dir: string;
  let store: Store;
  let url: string | undefined;
  let destroy: () => Promise<void>;
  let s: Seeded;
  let service: EnrollmentService;
  let deps: IngestDeps;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-figures-'));
    if (backend === 'postgres') {
      const pg = await freshStore('postgres');
      [store, url, destroy] = [pg, pg.url, () => pg.destroy()];
    } else {
      // On disk, so that the `cadenza` command can open it once this process has closed it.
      store = await openStore({ dataDir: embeddedDbDir(join(dir, 'data')) });
      await migrate(store);
      destroy = async () => undefined;
    }
    service = new EnrollmentService({ store, clock, random });
    deps = {
      store,
      service,
      clock,
      random,
      metrics,
      steps: { parse: async (raw) => ({ ok: true, mail: await parseMail(raw) }), newText: (m) => m.text, classify: (m) => verdicts.get(m.messageId ?? '') ?? human },
    };
    s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads: Array.from({ length: 6 }, (_, i) => `lead${i}@acme${i}.test`), tag: 'figures' });
    clock.advance(60_000);
  }, 120_000);
  afterAll(async () => {
    await store?.close().catch(() => undefined);
    await destroy?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('/metrics, GET …/analytics, cadenza status and the demo progress report the same sent, replied and reply-to-stop', { timeout: 180_000 }, async () => {
    // Six intros sent (seeded as the outbox records them). Three replies, an out-of-office note and
    // a hard bounce come back, received 300 to 1,500 ms before the batch is read.
    const [a, b, c, d, e] = s.sends;
    const mail = (x: typeof a, id: string, agoMs: number) => ({
      key: `INBOX:1:${id}`,
      folder: 'inbox' as const,
      threadId: null,
      receivedAt: clock.now() - agoMs,
      raw: enc(replyMail({ from: x!.leadEmail, to: 'rep@cadenza.test', inReplyTo: x!.messageId, subject: `Re: ${x!.subject}`, body: 'Thanks.', messageId: `<${id}@acme.test>` })),
    });
    verdicts.set('<ooo@acme.test>', { label: 'auto_reply', confidence: 0.95, reason: 'out of office', rung: 'out_of_office', returnDate: null });
    verdicts.set('<dsn@acme.test>', {
      label: 'bounce', confidence: 0.99, reason: 'DSN 5.1.1', rung: 'bounce',
      bounce: { recipient: e!.leadEmail, recipients: [e!.leadEmail], status: '5.1.1', replyCode: 550, hardSoft: 'hard', bounceClass: 'user_unknown', diagnostic: 'no such user', originalMessageId: e!.messageId },
    });
    const r = await ingestBatch(deps, { id: s.mailboxId, workspaceId: s.workspaceId }, {
      messages: [mail(a, 'r1', 300), mail(b, 'r2', 1200), mail(c, 'r3', 450), mail(d, 'ooo', 800), mail(e, 'dsn', 1500)],
      problems: [],
      cursor: { uid: 1 },
      mode: 'incremental',
    });
    expect(r.messages.map((m) => m.action)).toEqual(['reply', 'reply', 'reply', 'out_of_office', 'hard_bounce']);
    // Five stops or pauses: 300, 450, 800, 1200, 1500 ms; nearest rank p50 = 3rd, p90 = p99 = 5th.
    const replyToStop = { count: 5, p50Ms: 800, p90Ms: 1500, p99Ms: 1500 };
    const figures = { sent: 6, replied: 3, bounces: 1, unsubscribes: 0 };

    const accountId = newId(clock.now(), random);
    await store.db.insertInto('account').values({ id: accountId, email: 'owner@figures.test', name: 'Owner', password_hash: await hashPassword('a long password 123') }).execute();
    await addMembership(store.db, { clock, random }, { accountId, workspaceId: s.workspaceId, email: 'owner@figures.test', name: 'Owner', role: 'owner' });
    const app = buildServer({ store, clock, version: 'test', metrics, api: { random, vault: new Vault(store, localKeyWrapper(Buffer.alloc(32, 7))), publicUrl: 'http://localhost:8080', ...defaultAuthSettings } });
    try {
      await app.ready();
      const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      const gauge = (q: string) => Number(new RegExp(`^cadenza_reply_to_stop_ms\\{quantile="${q}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
      expect({ count: Number(/^cadenza_reply_to_stop_ms_count (\d+)$/m.exec(text)?.[1]), p50Ms: gauge('0.5'), p90Ms: gauge('0.9'), p99Ms: gauge('0.99') }).toEqual(replyToStop);
      expect(text).toContain(`cadenza_ingest_actions_total{action="reply"} ${figures.replied}`);

      const owner = await login(app, 'owner@figures.test', 'a long password 123');
      const api = (await owner.call('GET', `/api/workspaces/${s.workspaceId}/analytics?days=30`)).json();
      expect(api.totals).toMatchObject({ sends: figures.sent, replies: figures.replied, bounces: figures.bounces, unsubscribes: figures.unsubscribes });
      expect(api.replyToStop).toEqual(replyToStop);
      expect(api.funnel).toEqual([
        { sequenceName: 'Ingest', stepKey: 'intro', removed: false, sent: 6, replied: 3 },
        { sequenceName: 'Ingest', stepKey: 'follow', removed: false, sent: 0, replied: 0 },
      ]);
      const boxes = (await owner.call('GET', `/api/workspaces/${s.workspaceId}/analytics/mailboxes?days=30`)).json();
      expect(boxes.mailboxes).toMatchObject([{ id: s.mailboxId, sent: figures.sent, replies: figures.replied, hardBounces: figures.bounces }]);
    } finally {
      await app.close();
    }

    const demo = await readProgress(store, s.workspaceId, clock.now());
    expect(demo.sequences).toMatchObject([{ sent: figures.sent, replied: figures.replied }]);
    expect(demo.replyToStop).toEqual(replyToStop);

    // The real command, on the store this process has let go of.
    await store.close();
    const where = url ? ['--database-url', url] : ['--data-dir', join(dir, 'data')];
    const cli = spawnSync(process.execPath, [join(root, 'bin', 'cadenza.js'), ...where, '--json', 'status', '--workspace', s.workspaceId], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(cli.status, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).figures).toMatchObject({ days: 30, ...figures, replyToStop });
  });
});

/**
 * A reply read long after it arrived (a mailbox whose sync was down for a month, then reconnected)
 * has a reply-to-stop past `message.stop_latency_ms`'s integer range. Before, storing it failed
 * the message: it was quarantined as "integer out of range" and its enrollment went on sending.
 */
describe.each(testBackends())('a reply read a month after it arrived (%s)', (backend) => {
  it('stops its enrollment, its reply-to-stop stored as the column allows', async () => {
    const store = await freshStore(backend);
    try {
      const clock = new SimClock(Date.UTC(2026, 0, 5, 9));
      const random = seededRandom(`late-${backend}`);
      const service = new EnrollmentService({ store, clock, random });
      const metrics = new Metrics();
      const s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads: ['late@acme.test'], tag: 'late' });
      const x = s.sends[0]!;
      const receivedAt = clock.now() + 60_000;
      clock.advance(30 * DAY);
      const raw = replyMail({ from: x.leadEmail, to: 'rep@cadenza.test', inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: 'Yes, let us talk.', messageId: '<late@acme.test>' });
      const steps = { parse: async (r: Uint8Array) => ({ ok: true as const, mail: await parseMail(r) }), newText: (m: { text: string }) => m.text, classify: () => ({ label: 'human_reply' as const, confidence: 0.9, reason: 'test', rung: 'default' as const }) };
      const r = await ingestBatch({ store, service, clock, random, metrics, steps }, { id: s.mailboxId, workspaceId: s.workspaceId }, { messages: [{ key: 'INBOX:1:1', folder: 'inbox', threadId: null, receivedAt, raw: enc(raw) }], problems: [], cursor: { uid: 1 }, mode: 'incremental' });
      expect(r.quarantined).toBe(0);
      expect(r.messages).toMatchObject([{ action: 'reply', inserted: true }]);
      expect((await store.db.selectFrom('enrollment').select('state').where('id', '=', x.enrollmentId).executeTakeFirstOrThrow()).state).toBe('replied');
      const row = await store.db.selectFrom('message').select('stop_latency_ms').where('message_id', '=', '<late@acme.test>').executeTakeFirstOrThrow();
      expect(row.stop_latency_ms).toBe(MAX_STOP_LATENCY_MS);
      // The histogram keeps 3 significant digits up there.
      expect(metrics.summary().count).toBe(1);
      expect(Math.abs(metrics.summary().p50 - MAX_STOP_LATENCY_MS) / MAX_STOP_LATENCY_MS).toBeLessThan(0.001);
    } finally {
      await store.destroy();
    }
  });
});

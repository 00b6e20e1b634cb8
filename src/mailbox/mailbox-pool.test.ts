import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cadenzaError } from '../common/errors.ts';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import type { MailboxRow } from './connectors/connector.ts';
import { MailboxPool, type MailboxWork, type PoolMailbox } from './mailbox-pool.ts';
import { localKeyWrapper, Vault } from './vault.ts';

/**
 * The rules the sender and sync pools share (mailbox-pool.ts), on both backends: which mailboxes
 * they take (not removed, not in error; paused ones too), what a connector that cannot be built
 * does (the mailbox paused with the reason, the lease kept, tried again on the next renewal pass,
 * never paused twice), a failure that is not the mailbox's (the lease given back, no pause), and
 * the graceful stop (each work finishes, then the leases go).
 */
const T0 = Date.UTC(2026, 5, 1, 9, 0);
const TTL = 30_000;

class FakeWork implements MailboxWork {
  readonly done: Promise<void>;
  stops = 0;
  private end!: () => void;
  constructor(readonly mailboxId: string) {
    this.done = new Promise((r) => (this.end = r));
  }
  stop(): void {
    this.stops++;
    // The message in hand is recorded a moment later, then the work ends.
    setTimeout(() => this.end(), 5);
  }
  lost(): void {
    this.end();
  }
}

describe.each(testBackends())('the mailbox pool on %s', (backend) => {
  let store: TestStore;
  let vault: Vault;
  let workspaceId: string;
  let n = 0;
  const master = randomBytes(32);
  beforeAll(async () => {
    store = await freshStore(backend);
    vault = new Vault(store, localKeyWrapper(master));
    // A provider a later version knows and this one does not (a rolling upgrade): the database's
    // check would refuse it, so it goes for this file's database.
    await sql`alter table mailbox drop constraint mailbox_provider_check`.execute(store.db);
  });
  afterAll(async () => {
    await store.destroy();
  });
  beforeEach(async () => {
    await sql`truncate table workspace cascade`.execute(store.db);
    await sql`truncate table lease`.execute(store.db);
    n = 0;
    workspaceId = '00000000-0000-7000-8000-' + randomBytes(6).toString('hex');
    await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Acme', time_zone: 'UTC' }).execute();
  });

  async function mailbox(o: { health?: 'ok' | 'warning' | 'paused' | 'error'; removed?: boolean; provider?: string; settings?: unknown; password?: boolean } = {}): Promise<string> {
    const id = '00000000-0000-7000-8001-' + randomBytes(6).toString('hex');
    await store.db
      .insertInto('mailbox')
      .values({
        id,
        workspace_id: workspaceId,
        email: `rep${++n}@acme.test`,
        provider: (o.provider ?? 'smtp_imap') as 'smtp_imap',
        settings: JSON.stringify(o.settings ?? { smtp: { host: '127.0.0.1', port: 2525, security: 'none' }, imap: { host: '127.0.0.1', port: 1143, security: 'none' } }),
        health: o.health ?? 'ok',
        ...(o.removed ? { removed_at: new Date(T0) } : {}),
      })
      .execute();
    if (o.password !== false) await vault.put(workspaceId, id, { kind: 'password', username: '', password: 'pw' });
    return id;
  }

  function pool(o: { connectorFor?: (m: MailboxRow) => { close(): Promise<void> }; needs?: 'send' | 'sync'; vault?: Pick<Vault, 'get'> } = {}) {
    const clock = new SimClock(T0);
    const works: FakeWork[] = [];
    const cannot: string[] = [];
    let closed = 0;
    const p = new MailboxPool<{ close(): Promise<void> }, FakeWork>(
      {
        store,
        clock,
        random: seededRandom(`pool-${n}`),
        vault: o.vault ?? vault,
        owner: `test-${randomBytes(3).toString('hex')}`,
        leaseTtlMs: TTL,
        membership: { heartbeatMs: 1_000 },
        ...(o.connectorFor ? { connectorFor: o.connectorFor } : {}),
      },
      {
        name: 'sender',
        prefix: 'mailbox:',
        needs: o.needs ?? 'send',
        run: (m: PoolMailbox) => {
          const w = new FakeWork(m.id);
          works.push(w);
          return w;
        },
        cannotConnect: (_m, reason) => void cannot.push(reason),
      },
    );
    const fake = () => ({ close: async () => void closed++ });
    return { p, clock, works, cannot, closedCount: () => closed, fake };
  }

  const health = (id: string) => store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', id).executeTakeFirstOrThrow();
  const leaseOf = (id: string) => store.db.selectFrom('lease').select(['owner', 'token']).where('resource', '=', `mailbox:${id}`).executeTakeFirst();

  it('takes every mailbox not removed and not in error, paused ones too', async () => {
    const ok = await mailbox();
    const warning = await mailbox({ health: 'warning' });
    const paused = await mailbox({ health: 'paused' });
    await mailbox({ health: 'error' });
    await mailbox({ health: 'paused', removed: true });
    const t = pool({ connectorFor: () => ({ close: async () => undefined }) });
    await t.p.start();
    expect(t.p.mailboxes.sort()).toEqual([ok, warning, paused].sort());
    await t.p.stop();
  });

  it('builds each connector from the registry for the role: a mailbox that cannot have one is paused with the reason, its lease kept and tried again, once paused', async () => {
    const good = await mailbox();
    const noSmtp = await mailbox({ settings: { imap: { host: '127.0.0.1', port: 1143, security: 'none' } } });
    const noCredential = await mailbox({ password: false });
    const t = pool();
    await t.p.start();
    expect(t.p.mailboxes).toEqual([good]);
    expect(await health(noSmtp)).toEqual({ health: 'paused', health_reason: `cannot connect: mailbox rep2@acme.test has no SMTP server in its settings` });
    expect(await health(noCredential)).toEqual({ health: 'paused', health_reason: 'cannot connect: mailbox rep3@acme.test has no credential in the vault' });
    // Kept, not given back: no other process rebuilds it on every heartbeat.
    const kept = await leaseOf(noSmtp);
    expect(kept?.owner).toBe(t.p.owner);
    expect(t.cannot).toHaveLength(2);
    // The next renewal pass tries again (same lease, same token) and fails the same way; the first
    // reason stays.
    t.clock.advance(TTL / 3);
    await t.p.balance();
    expect(t.cannot.length).toBeGreaterThanOrEqual(4);
    expect(await leaseOf(noSmtp)).toEqual(kept);
    expect((await health(noSmtp)).health_reason).toMatch(/no SMTP server/);
    await t.p.stop();
  });

  it('the sync role needs IMAP, not SMTP', async () => {
    const imapOnly = await mailbox({ settings: { imap: { host: '127.0.0.1', port: 1143, security: 'none' } } });
    const smtpOnly = await mailbox({ settings: { smtp: { host: '127.0.0.1', port: 2525, security: 'none' } } });
    const t = pool({ needs: 'sync' });
    await t.p.start();
    expect(t.p.mailboxes).toEqual([imapOnly]);
    expect(await health(smtpOnly)).toEqual({ health: 'paused', health_reason: 'cannot connect: mailbox rep2@acme.test has no IMAP server in its settings' });
    await t.p.stop();
  });

  // Regression: SenderPool.launch called transports[provider] directly, so a provider the registry
  // does not know was paused as "cannot send: transports[mb.provider] is not a function".
  it("a provider this version does not know is refused by the registry's guard, with its name", async () => {
    const pigeon = await mailbox({ provider: 'pigeon' });
    const t = pool();
    await t.p.start();
    expect(t.p.mailboxes).toEqual([]);
    expect(await health(pigeon)).toEqual({ health: 'paused', health_reason: "cannot connect: unknown mailbox provider 'pigeon'" });
    await t.p.stop();
  });

  it('a connector factory that says CONFIG_INVALID follows the same rule; any other failure gives the lease back and pauses nothing', async () => {
    const a = await mailbox();
    const t = pool({
      connectorFor: () => {
        throw cadenzaError('CONFIG_INVALID', 'no token source for this grant here');
      },
    });
    await t.p.start();
    expect(await health(a)).toEqual({ health: 'paused', health_reason: 'cannot connect: no token source for this grant here' });
    await t.p.stop();

    const b = await mailbox();
    const broken = pool({ vault: { get: async () => Promise.reject(new Error('the vault cannot be read')) } });
    await broken.p.start();
    expect(broken.p.mailboxes).toEqual([]);
    expect(await health(b)).toEqual({ health: 'ok', health_reason: null });
    expect(await leaseOf(b)).toBeUndefined();
    await broken.p.stop();
  });

  it('a graceful stop lets each work finish what it has in hand, closes its connector, then releases the leases', async () => {
    await mailbox();
    await mailbox({ health: 'paused' });
    const t = pool({ connectorFor: () => t.fake() });
    await t.p.start();
    expect(t.works).toHaveLength(2);
    expect(await store.db.selectFrom('lease').select('resource').execute()).toHaveLength(2);
    await t.p.stop();
    expect(t.works.map((w) => w.stops)).toEqual([1, 1]);
    expect(t.closedCount()).toBe(2);
    expect(await store.db.selectFrom('lease').select('resource').execute()).toEqual([]);
  });
});

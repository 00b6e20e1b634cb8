import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import type { Transport } from '../mailbox/connectors/connector.ts';
import type { Envelope, SendOutcome } from '../mailbox/connectors/outcomes.ts';
import { resumeMailbox } from '../mailbox/health/pause.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { trackingKey } from './compose/tracking.ts';
import { SenderPool } from './sender-pool.ts';

/**
 * The sender role on the pool's shared rules (mailbox/mailbox-pool.ts), on both backends, with a
 * connector that records what it is asked to send: a paused mailbox is held (its lease taken, its
 * loop running) and sends nothing, because its claims are refused; resumed, its queue is planned
 * and it sends at once, without waiting for a balance pass. And the registry's guard: a provider
 * this version does not know pauses the mailbox with its name.
 */
const T0 = Date.UTC(2026, 5, 1, 9, 0); // a Monday
const anyTime = { workDays: [1, 2, 3, 4, 5, 6, 7], dayStart: '00:00', dayEnd: '23:59', dayJitterMinutes: 0, lunch: null, pickupMinutes: 0, spreadDay: false };

class RecordingTransport implements Transport {
  readonly kind = 'gmail' as const;
  readonly sentProof = 'provider_copy' as const;
  readonly sent: string[] = [];
  async send(_raw: Buffer, envelope: Envelope): Promise<SendOutcome> {
    this.sent.push(envelope.to[0]!);
    return { kind: 'accepted', response: '200 ok', providerId: null, bounced: [], sentCopy: 'server' };
  }
  async findSent() {
    return { status: 'not_found' as const };
  }
  async recentMailFrom() {
    return { status: 'ok' as const, messages: [] };
  }
  async close(): Promise<void> {}
}

describe.each(testBackends())('the sender pool on %s', (backend) => {
  let store: TestStore;
  let pool: SenderPool | undefined;
  const master = randomBytes(32);
  beforeAll(async () => {
    store = await freshStore(backend);
    await sql`alter table mailbox drop constraint mailbox_provider_check`.execute(store.db);
  });
  afterEach(async () => {
    await pool?.stop();
    pool = undefined;
  });
  afterAll(async () => {
    await store.destroy();
  });

  async function workspace(o: { provider?: string; health?: 'ok' | 'paused' }) {
    const clock = new SimClock(T0);
    const random = seededRandom(randomBytes(4).toString('hex'));
    const tag = randomBytes(4).toString('hex');
    const ws = '00000000-0000-7000-8000-' + randomBytes(6).toString('hex');
    const mb = '00000000-0000-7000-8001-' + randomBytes(6).toString('hex');
    const email = `rep-${tag}@acme.test`;
    await store.db.insertInto('workspace').values({ id: ws, name: `Acme ${tag}`, time_zone: 'UTC' }).execute();
    await store.db
      .insertInto('mailbox')
      .values({ id: mb, workspace_id: ws, email, provider: (o.provider ?? 'gmail') as 'gmail', daily_cap: 50, settings: JSON.stringify({ pacing: anyTime }), time_zone: 'UTC', health: o.health ?? 'ok' })
      .execute();
    await new Vault(store, localKeyWrapper(master)).put(ws, mb, { kind: 'oauth', accessToken: 'at' });
    const lead = '00000000-0000-7000-8002-' + randomBytes(6).toString('hex');
    await store.db.insertInto('lead').values({ id: lead, workspace_id: ws, email: `lee-${tag}@prospect.test`, email_norm: `lee-${tag}@prospect.test`, first_name: 'Lee', time_zone: 'UTC' }).execute();
    const def = validateDefinition({ key: 's', name: 'S', window: 'any', holidays: false, jitter_minutes: 0, mailboxes: [email], steps: [{ key: 'intro', type: 'email', subject: 'Hello {{first_name}}', body: 'Hi {{first_name}}' }] });
    const service = new EnrollmentService({ store, clock, random });
    const seq = await applyDefinition(store, { clock, random }, ws, def);
    await bulkEnroll(store, { clock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: [lead] });
    await service.fireDue(100);
    const transport = new RecordingTransport();
    const options: ConstructorParameters<typeof SenderPool>[0] = {
      store,
      service,
      clock,
      random,
      vault: new Vault(store, localKeyWrapper(master)),
      trackingKey: trackingKey(master),
      publicUrl: 'https://cadenza.example.test',
      owner: `sender-${tag}`,
      idlePollMs: 1_000,
      leaseTtlMs: 10 * 60_000,
      transportFor: () => transport,
    };
    return { clock, mb, transport, options };
  }

  /** Lets simulated time pass in steps while the loops run on real promises. */
  async function run(clock: SimClock, ms: number, until: () => boolean = () => false) {
    for (let t = 0; t < ms && !until(); t += 1_000) {
      clock.advance(1_000);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  it('holds a paused mailbox and sends nothing from it; resumed, it sends at once', async () => {
    const { clock, mb, transport, options } = await workspace({ health: 'paused' });
    const p = (pool = new SenderPool(options));
    await p.start();
    expect(p.mailboxes).toEqual([mb]);
    await run(clock, 60_000);
    expect(transport.sent).toEqual([]);
    const req = await store.db.selectFrom('send_request').select(['state', 'claimed_at', 'send_at']).where('mailbox_id', '=', mb).executeTakeFirstOrThrow();
    expect(req).toMatchObject({ state: 'queued', claimed_at: null, send_at: null });

    expect(await resumeMailbox(store.db, mb)).toBe(true);
    // What the 'mailboxes' nudge does in the app: a balance (nothing to take: it is held already) and a plan.
    await p.balance();
    await p.nudge();
    await run(clock, 60_000, () => transport.sent.length > 0);
    expect(transport.sent).toHaveLength(1);
    expect(p.mailboxes).toEqual([mb]);
  }, 60_000);

  // docs/benchmarks.md, "A working day": at 10,000 mailboxes the wakes of idle loops (the poll,
  // the planner's nudges) were most of the day's statements, each a claim transaction.
  it('an idle mailbox wakes on its poll without claiming: a claim only when a send is due', async () => {
    const { clock, transport, options } = await workspace({});
    const steps: string[] = [];
    const p = (pool = new SenderPool({ ...options, onStep: (_id, r) => void steps.push(r.kind) }));
    await p.start();
    await run(clock, 60_000, () => steps.length > 0);
    expect(transport.sent).toHaveLength(1);
    expect(steps).toEqual(['sent']);
    // A minute of polls every second with nothing queued: no step at all.
    await run(clock, 60_000);
    expect(steps).toEqual(['sent']);
  }, 60_000);

  // Regression: launch called transports[provider] itself, past createTransport's guard, so such a
  // mailbox was paused as "cannot send: transports[mb.provider] is not a function".
  it("pauses a mailbox whose provider this version does not know, naming it, and sends nothing", async () => {
    const { clock, mb, options } = await workspace({ provider: 'pigeon' });
    const { transportFor: _registry, ...fromRegistry } = options;
    const p = (pool = new SenderPool(fromRegistry));
    await p.start();
    await run(clock, 5_000);
    expect(p.mailboxes).toEqual([]);
    const row = await store.db.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', mb).executeTakeFirstOrThrow();
    expect(row).toEqual({ health: 'paused', health_reason: "cannot connect: unknown mailbox provider 'pigeon'" });
  }, 60_000);
});

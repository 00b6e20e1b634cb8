import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { openStore, type Store } from '../store/store.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { describeMailBed } from '../../test/mail/describe-mail-bed.ts';
import { startFaultProxy } from '../../test/mail/fault-proxy.ts';
import { bedEndpoint, countByMessageId, mailBed, readInbox } from '../../test/mail/mailbed.ts';
import { trackingKey } from './compose/tracking.ts';
import { MailboxSender, type MailboxSenderDeps } from './mailbox-sender.ts';
import type { Transport } from '../mailbox/connectors/connector.ts';
import { createConnector } from '../mailbox/connectors/registry.ts';
import PostalMime from 'postal-mime';

async function headersOf(source: Buffer): Promise<Record<string, string>> {
  const parsed = await PostalMime.parse(source);
  const out: Record<string, string> = {};
  for (const h of parsed.headers) if (!(h.key in out)) out[h.key] = h.value;
  return out;
}

/**
 * The sending pipeline end to end on real servers: the engine plans, the sender claims, composes
 * and hands the message to Postfix, Dovecot delivers it, and the test reads it over IMAP. The
 * store is PostgreSQL (several sender processes share one); times are simulated so a follow-up
 * "2 days later" is due at once, while the mail really travels.
 */

const T0 = Date.UTC(2026, 5, 1, 13, 0); // a Monday
const { alice } = mailBed;
const prospects = mailBed.prospects;

describeMailBed('sending through Postfix into Dovecot', () => {
  let store: TestStore;
  const clock = new SimClock(T0);
  const random = seededRandom(5);
  const master = randomBytes(32);
  let service: EnrollmentService;
  let workspaceId: string;
  let mailboxId: string;
  let tag: string;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    store = await freshStore('postgres');
    service = new EnrollmentService({ store, clock, random });
  });
  afterAll(async () => {
    for (const c of closers.reverse()) await c();
    await store.destroy();
  });

  /** A workspace whose mailbox is alice on the bed, with leads at the bed's prospects. */
  /** `stopRules`: the outbound sequence's, whose reply rules may move a lead to `nurture` (applied too, first email without a subject). */
  async function world(smtpPort: number = mailBed.submissionPort, leads: string[] = prospects.map((p) => p.user), stopRules?: object) {
    await sql`truncate table workspace, event cascade`.execute(store.db);
    tag = randomBytes(4).toString('hex');
    workspaceId = '00000000-0000-7000-8000-' + randomBytes(6).toString('hex');
    await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Acme', time_zone: 'UTC' }).execute();
    mailboxId = '00000000-0000-7000-8001-' + randomBytes(6).toString('hex');
    const settings = { smtp: { ...bedEndpoint('smtp', 'none'), port: smtpPort }, imap: bedEndpoint('imap'), serverSavesSent: true };
    await store.db.insertInto('mailbox').values({ id: mailboxId, workspace_id: workspaceId, email: alice.user, display_name: 'Alice Rep', provider: 'smtp_imap', settings: JSON.stringify(settings), time_zone: 'UTC' }).execute();
    await new Vault(store, localKeyWrapper(master)).put(workspaceId, mailboxId, { kind: 'password', username: alice.user, password: alice.pass });
    const ids: string[] = [];
    for (const [i, email] of leads.entries()) {
      const id = '00000000-0000-7000-8002-' + randomBytes(6).toString('hex');
      ids.push(id);
      await store.db.insertInto('lead').values({ id, workspace_id: workspaceId, email, email_norm: email, first_name: `Pat${i}`, company: 'Prospect Co', time_zone: 'UTC' }).execute();
    }
    const def = validateDefinition({
      key: 'outbound',
      name: 'Outbound',
      window: 'any',
      holidays: false,
      jitter_minutes: 0,
      mailboxes: [alice.user],
      ...(stopRules ? { stop_rules: stopRules } : {}),
      steps: [
        { key: 'intro', type: 'email', subject: `Quick question {{first_name}} ${tag}`, body: 'Hi {{first_name}},\n\nWorth a chat about {{company}}?\n' },
        { key: 'bump', type: 'email', delay: '2 days', body: 'Hi {{first_name | default: "there"}}, bumping this.\n' },
      ],
    });
    if (stopRules) {
      const nurture = { key: 'nurture', name: 'Nurture', window: 'any', holidays: false, jitter_minutes: 0, mailboxes: [alice.user], steps: [{ key: 'n1', type: 'email', body: 'Hi {{first_name}}, checking back in as promised.\n' }] };
      await applyDefinition(store, { clock, random }, workspaceId, validateDefinition(nurture));
    }
    const seq = await applyDefinition(store, { clock, random }, workspaceId, def);
    await bulkEnroll(store, { clock, random }, { workspaceId, sequenceId: seq.sequenceId, leadIds: ids });
    return ids;
  }

  async function senderFor(s: Store, port?: number): Promise<{ sender: MailboxSender; transport: Transport }> {
    const mb = await s.db.selectFrom('mailbox').select(['id', 'email', 'provider', 'settings']).where('id', '=', mailboxId).executeTakeFirstOrThrow();
    const settings = mb.settings as { smtp: { port: number } };
    if (port) settings.smtp.port = port;
    const credential = await new Vault(s, localKeyWrapper(master)).get(mailboxId);
    const transport = createConnector({ ...mb, settings }, { clock, random, credential, smtpTimeouts: { connectMs: 3000, greetingMs: 3000, socketMs: 4000, totalMs: 15_000 } }, ['send']);
    closers.push(() => transport.close());
    const deps: MailboxSenderDeps = {
      store: s,
      service: s === store ? service : new EnrollmentService({ store: s, clock, random: seededRandom(random.int(0, 1e9)) }),
      clock,
      random,
      transport,
      trackingKey: trackingKey(master),
      publicUrl: 'https://cadenza.example.test',
      pauseMailbox: async (id, reason) => void (await s.db.updateTable('mailbox').set({ health: 'paused', health_reason: reason }).where('id', '=', id).execute()),
      policy: { unknownGraceMs: 5_000 },
    };
    return { sender: new MailboxSender(mailboxId, deps), transport };
  }

  async function drain(sender: MailboxSender): Promise<number> {
    let sent = 0;
    for (;;) {
      const r = await sender.step();
      if (r.kind === 'idle') return sent;
      if (r.kind === 'sent') sent++;
      else if (r.kind !== 'refused') throw new Error(`unexpected step result ${JSON.stringify(r)}`);
    }
  }

  it('sends the first step, then a follow-up that threads under it, with a working one-click unsubscribe header', async () => {
    await world(mailBed.submissionPort, [prospects[0]!.user]);
    await service.fireDue(100);
    const { sender } = await senderFor(store);
    expect(await drain(sender)).toBe(1);
    const first = await store.db.selectFrom('message').select(['message_id', 'subject']).where('direction', '=', 'outbound').executeTakeFirstOrThrow();
    const [inbox] = await readInbox(prospects[0]!.user, prospects[0]!.pass, first.message_id);
    const h1 = await headersOf(inbox!.source);
    expect(h1['subject']).toBe(`Quick question Pat0 ${tag}`);
    expect(h1['list-unsubscribe']).toMatch(/^<https:\/\/cadenza\.example\.test\/t\/u\/[A-Za-z0-9_-]+>, <mailto:alice@example\.test\?subject=unsubscribe/);
    expect(h1['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    // The server filed a copy in alice's Sent folder.
    expect(await countByMessageId(alice.user, alice.pass, first.message_id, 'Sent')).toBe(1);

    clock.advance(2 * 86_400_000 + 60_000);
    await service.fireDue(100);
    expect(await drain(sender)).toBe(1);
    const second = await store.db.selectFrom('message').select(['message_id']).where('direction', '=', 'outbound').where('message_id', '<>', first.message_id).executeTakeFirstOrThrow();
    const [bump] = await readInbox(prospects[0]!.user, prospects[0]!.pass, second.message_id);
    const h2 = await headersOf(bump!.source);
    expect(h2['subject']).toBe(`Re: Quick question Pat0 ${tag}`);
    expect(h2['in-reply-to']).toBe(first.message_id);
    expect(h2['references']).toContain(first.message_id);
    const e = await store.db.selectFrom('enrollment').select(['state']).executeTakeFirstOrThrow();
    expect(e.state).toBe('finished');
  });

  it("a reply rule's move to a nurture keeps the mailbox, and the nurture's first email continues the thread (issue 18)", async () => {
    await world(mailBed.submissionPort, [prospects[2]!.user], { on_reply: { not_interested: { move_to: 'nurture', after: '1 week' } } });
    await service.fireDue(100);
    const { sender } = await senderFor(store);
    expect(await drain(sender)).toBe(1);
    const intro = await store.db.selectFrom('message').select(['message_id', 'enrollment_id']).where('direction', '=', 'outbound').executeTakeFirstOrThrow();
    clock.advance(3_600_000);
    await service.apply(intro.enrollment_id!, { type: 'reply', intent: 'not_interested', from: prospects[2]!.user });
    // Nothing before the rule's week; then the nurture's first email, from the same mailbox, in the same thread.
    clock.advance(6 * 86_400_000);
    await service.fireDue(100);
    expect(await drain(sender)).toBe(0);
    clock.advance(86_400_000 + 60_000);
    await service.fireDue(100);
    expect(await drain(sender)).toBe(1);
    const n1 = await store.db.selectFrom('message').select(['message_id', 'enrollment_id']).where('direction', '=', 'outbound').where('message_id', '<>', intro.message_id).executeTakeFirstOrThrow();
    expect(n1.enrollment_id).not.toBe(intro.enrollment_id);
    const [mail] = await readInbox(prospects[2]!.user, prospects[2]!.pass, n1.message_id);
    const h = await headersOf(mail!.source);
    expect(h['subject']).toBe(`Re: Quick question Pat0 ${tag}`);
    expect(h['in-reply-to']).toBe(intro.message_id);
    expect(h['references']).toContain(intro.message_id);
    expect(h['from']).toContain(alice.user);
    const old = await store.db.selectFrom('enrollment').select(['state', 'moved_to']).where('id', '=', intro.enrollment_id!).executeTakeFirstOrThrow();
    expect(old).toEqual({ state: 'replied', moved_to: n1.enrollment_id });
  });

  it('connection dropped right after DATA: the request becomes unknown, is found in Sent, ends sent, and was delivered once', async () => {
    const proxy = await startFaultProxy({ host: mailBed.host, port: mailBed.submissionPort }, { kind: 'drop_after_terminator' });
    closers.push(() => proxy.close());
    await world(proxy.port, [prospects[1]!.user]);
    await service.fireDue(100);
    const { sender } = await senderFor(store, proxy.port);
    const r = await sender.step();
    expect(r.kind).toBe('unknown');
    const req = await store.db.selectFrom('send_request').select(['state', 'message_id']).executeTakeFirstOrThrow();
    expect(req.state).toBe('unknown');
    // Postfix delivered it although the client saw the connection drop.
    await readInbox(prospects[1]!.user, prospects[1]!.pass, req.message_id!);
    const settled = await sender.resolveUnknowns();
    expect(settled.found).toBe(1);
    expect((await store.db.selectFrom('send_request').select('state').executeTakeFirstOrThrow()).state).toBe('sent');
    expect(await countByMessageId(prospects[1]!.user, prospects[1]!.pass, req.message_id!)).toBe(1);
    // Nothing is sent again.
    expect((await sender.step()).kind).toBe('idle');
  });

  it('several sender processes on one PostgreSQL drain one queue concurrently and deliver every message exactly once', async () => {
    const leads = Array.from({ length: 24 }, (_, i) => `${prospects[i % prospects.length]!.user.replace('@', `+c${i}@`)}`);
    await world(mailBed.submissionPort, leads);
    await service.fireDue(100);
    const pools = await Promise.all([1, 2, 3].map(() => openStore({ databaseUrl: store.url!, poolSize: 3 })));
    closers.push(async () => void (await Promise.all(pools.map((p) => p.close()))));
    const senders = await Promise.all(pools.map((p) => senderFor(p)));
    const counts = await Promise.all(senders.map(({ sender }) => drain(sender)));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(24);
    expect(counts.filter((c) => c > 0).length).toBeGreaterThan(1);
    const msgs = await store.db.selectFrom('message').select(['message_id', 'to_addrs']).where('direction', '=', 'outbound').execute();
    expect(new Set(msgs.map((m) => m.message_id)).size).toBe(24);
    // Every message reached its prospect's INBOX exactly once (+tags deliver to the base user).
    for (const m of msgs) {
      const row = await store.db.selectFrom('send_request as r').innerJoin('enrollment as e', 'e.id', 'r.enrollment_id').innerJoin('lead as l', 'l.id', 'e.lead_id').select('l.email').where('r.message_id', '=', m.message_id).executeTakeFirstOrThrow();
      const base = row.email.replace(/\+[^@]*/, '');
      const who = prospects.find((p) => p.user === base)!;
      await readInbox(who.user, who.pass, m.message_id);
      expect(await countByMessageId(who.user, who.pass, m.message_id)).toBe(1);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/random.ts';
import type { MailboxSync, SyncBatch, SyncCursor, WatchHandle } from '../../mailbox/sync/source.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { freshStore, type TestStore } from '../../../test/stores.ts';
import { parseMail } from '../parse/parse-mail.ts';
import { runSteps, type IngestDeps } from '../pipeline.ts';
import { replyMail, seedSentSequence, type Seeded } from '../../../test/ingest/seed-sent-sequence.ts';
import { MailboxLoop } from './mailbox-loop.ts';

/**
 * The loop's control flow on simulated time: pushes coalesce, failures wait their backoff (and a
 * push does not cut it short), the reconciliation poll runs without pushes, stop lets the batch in
 * hand commit. The connector is scripted here because these are the loop's decisions, not the
 * server's; the real IMAP connector drives the loop in the *.mail tests.
 */
class ScriptedSync implements MailboxSync {
  pulls: Array<SyncCursor | null> = [];
  fail = 0;
  pending: SyncBatch[] = [];
  changed: (() => void) | null = null;
  failed: ((e: unknown) => void) | null = null;
  watches = 0;
  /** Resolves the pull's yield only when released (to hold a batch "in flight"). */
  gate: Promise<void> | null = null;
  async *pull(cursor: SyncCursor | null): AsyncIterable<SyncBatch> {
    this.pulls.push(cursor);
    if (this.fail > 0) {
      this.fail--;
      throw new Error('connection reset');
    }
    const batches = this.pending.splice(0);
    for (const b of batches) {
      if (this.gate) await this.gate;
      yield b;
    }
  }
  async watch(changed: () => void, failed: (e: unknown) => void): Promise<WatchHandle> {
    this.watches++;
    this.changed = changed;
    this.failed = failed;
    return { close: async () => void (this.changed = null) };
  }
  async close(): Promise<void> {}
}

/** A connector whose watch offers its own pull (as IMAP IDLE does): which pull ran is recorded. */
class WatchPullSync extends ScriptedSync {
  log: string[] = [];
  watchPullFails = 0;
  watchPending: SyncBatch[] = [];
  watchCursors: Array<SyncCursor | null> = [];
  override async *pull(cursor: SyncCursor | null): AsyncIterable<SyncBatch> {
    this.log.push('full');
    yield* super.pull(cursor);
  }
  override async watch(changed: () => void, failed: (e: unknown) => void): Promise<WatchHandle> {
    const handle = await super.watch(changed, failed);
    const self = this;
    let open = true;
    return {
      close: async () => {
        open = false;
        await handle.close();
      },
      async *pull(cursor: SyncCursor | null) {
        self.log.push(open ? 'watch' : 'watch (closed)');
        self.watchCursors.push(cursor);
        if (self.watchPullFails > 0) {
          self.watchPullFails--;
          // As the IMAP watch does: the broken connection fails the watch, then the pull throws.
          failed(new Error('watch connection reset'));
          throw new Error('watch connection reset');
        }
        expect(cursor).not.toBeNull();
        yield* self.watchPending.splice(0);
      },
    };
  }
}

const tick = () => new Promise((r) => setTimeout(r, 20));
const T0 = Date.UTC(2026, 5, 1, 9);

describe('MailboxLoop', () => {
  let store: TestStore;
  let s: Seeded;
  let deps: IngestDeps;
  const clock = new SimClock(T0);
  beforeAll(async () => {
    store = await freshStore('pglite');
    const random = seededRandom('loop');
    const service = new EnrollmentService({ store, clock, random });
    s = await seedSentSequence(store, { clock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads: ['a@acme.test'], tag: 'loop' });
    deps = { store, service, clock, random, steps: { parse: async (raw) => ({ ok: true, mail: await parseMail(raw) }), newText: (m) => m.text, classify: () => ({ label: 'human_reply', confidence: 0.9, reason: 'test', rung: 'default' }) } };
  }, 60_000);
  afterAll(async () => {
    await store?.destroy();
  });

  it('coalesces pushes, polls without them, backs off after a failure, and lets the batch in hand commit on stop', async () => {
    const sync = new ScriptedSync();
    const batches: number[] = [];
    const loop = new MailboxLoop({ ingest: deps, mailbox: { id: s.mailboxId, workspaceId: s.workspaceId, provider: 'smtp_imap' }, connector: sync, clock, random: seededRandom(1), reconcileMs: 15 * 60_000, backoff: { baseMs: 10_000, capMs: 60_000 }, onBatch: (r) => batches.push(r.messages.length) });
    const running = loop.run();
    await tick();
    expect([sync.pulls.length, sync.watches]).toEqual([1, 1]);

    // Three pushes while idle: one pull.
    sync.changed!();
    sync.changed!();
    sync.changed!();
    await tick();
    expect(sync.pulls.length).toBe(2);

    // Nothing for 15 minutes: the reconciliation poll pulls anyway.
    clock.advance(15 * 60_000);
    await tick();
    expect(sync.pulls.length).toBe(3);

    // The watch breaks: backoff (at most 10 s for the first failure); pushes meanwhile do not cut it short.
    sync.fail = 1;
    sync.failed!(new Error('socket closed'));
    await tick();
    expect(sync.pulls.length).toBe(3);
    sync.changed?.();
    await tick();
    expect(sync.pulls.length).toBe(3);
    clock.advance(10_001);
    await tick();
    // Re-watched, and the pull after the reconnect failed once more: a second backoff, then it works.
    expect(sync.watches).toBe(2);
    expect(sync.pulls.length).toBe(4);
    clock.advance(20_001);
    await tick();
    expect(sync.pulls.length).toBe(5);
    expect((await store.db.selectFrom('mailbox_sync').select('last_error').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).last_error).toBeNull();

    // A batch in hand when stop comes is ingested and its cursor committed.
    let release!: () => void;
    sync.gate = new Promise((r) => (release = r));
    const raw = new TextEncoder().encode(replyMail({ from: 'a@acme.test', to: 'rep@cadenza.test', inReplyTo: s.sends[0]!.messageId, subject: 'Re: x', body: 'yes', messageId: '<stop@acme.test>' }));
    sync.pending.push({ messages: [{ key: 'k1', folder: 'inbox', raw, threadId: null, receivedAt: clock.now() }], problems: [], cursor: { uid: 42 }, mode: 'incremental' });
    sync.changed!();
    await tick();
    release();
    loop.stop();
    await running;
    expect(loop.ended).toBe('stopped');
    expect(batches.at(-1)).toBe(1);
    expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual({ uid: 42 });
    expect((await store.db.selectFrom('enrollment').select('state').where('id', '=', s.sends[0]!.enrollmentId).executeTakeFirstOrThrow()).state).toBe('replied');
  });

  it('prepares the next batch while the current one commits, and commits in the connector order', async () => {
    const sync = new ScriptedSync();
    const log: string[] = [];
    const mail = (id: string) => new TextEncoder().encode(replyMail({ from: 'x@elsewhere.test', to: 'rep@cadenza.test', subject: 'Hello', body: 'hi', messageId: `<${id}@elsewhere.test>` }));
    for (const [i, id] of ['p1', 'p2', 'p3'].entries()) sync.pending.push({ messages: [{ key: `k-${id}`, folder: 'inbox', raw: mail(id), threadId: null, receivedAt: clock.now() }], problems: [], cursor: { uid: 100 + i }, mode: 'incremental' });
    const steps = deps.steps;
    const ingest: IngestDeps = {
      ...deps,
      steps: {
        ...steps,
        prepare: async (raw) => {
          log.push(`prepare ${/Message-ID: <(\w+)@/.exec(new TextDecoder().decode(raw))![1]}`);
          return runSteps(steps, raw);
        },
      },
    };
    const loop = new MailboxLoop({ ingest, mailbox: { id: s.mailboxId, workspaceId: s.workspaceId, provider: 'smtp_imap' }, connector: sync, clock, random: seededRandom(2), reconcileMs: 15 * 60_000, onBatch: (r) => log.push(`commit ${r.messages[0]!.messageId.slice(1, 3)}`) });
    const running = loop.run();
    while (log.length < 6) await tick();
    loop.stop();
    await running;
    expect(log).toEqual(['prepare p1', 'prepare p2', 'commit p1', 'prepare p3', 'commit p2', 'commit p3']);
    expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual({ uid: 102 });
  });

  it('pulls on the watch connection for the watch pushes only, and falls back to a full pull when it fails', async () => {
    const sync = new WatchPullSync();
    const loop = new MailboxLoop({ ingest: deps, mailbox: { id: s.mailboxId, workspaceId: s.workspaceId, provider: 'smtp_imap' }, connector: sync, clock, random: seededRandom(3), reconcileMs: 15 * 60_000, backoff: { baseMs: 10_000, capMs: 60_000 } });
    const running = loop.run();
    await tick();
    // The first pull is full (it stores the first cursor, every folder).
    expect(sync.log).toEqual(['full']);

    // Two watch pushes: one pull, on the watch connection; it commits its batch and cursor.
    const raw = new TextEncoder().encode(replyMail({ from: 'a@acme.test', to: 'rep@cadenza.test', subject: 'Hello again', body: 'hi', messageId: '<w1@acme.test>' }));
    sync.watchPending.push({ messages: [{ key: 'w1', folder: 'inbox', raw, threadId: null, receivedAt: clock.now() }], problems: [], cursor: { uid: 7 }, mode: 'incremental' });
    sync.changed!();
    sync.changed!();
    await tick();
    expect(sync.log).toEqual(['full', 'watch']);
    expect((await store.db.selectFrom('mailbox_sync').select('cursor').where('mailbox_id', '=', s.mailboxId).executeTakeFirstOrThrow()).cursor).toEqual({ uid: 7 });

    // A poke from outside (a last look, the push bus) may be about Junk: a full pull, from the
    // cursor the loop committed.
    loop.poke();
    await tick();
    expect(sync.log).toEqual(['full', 'watch', 'full']);
    expect(sync.pulls.at(-1)).toEqual({ uid: 7 });

    // The loop keeps the cursor it committed (only the lease holder writes it): a push's pull does
    // not read it from the store. Changed behind its back, the store's is read after the backoff of a failure.
    await store.db.updateTable('mailbox_sync').set({ cursor: JSON.stringify({ uid: 8 }) }).where('mailbox_id', '=', s.mailboxId).execute();
    sync.changed!();
    await tick();
    expect(sync.watchCursors.at(-1)).toEqual({ uid: 7 });

    // The reconciliation pull is full even when a watch push comes at the same moment.
    clock.advance(15 * 60_000);
    sync.changed!();
    await tick();
    expect(sync.log).toEqual(['full', 'watch', 'full', 'watch', 'full']);

    // The watch connection breaks during its pull: the push is pulled at once the full way, and the
    // watch comes back only after the backoff (then a full pull, as after any failure).
    sync.watchPullFails = 1;
    sync.changed!();
    await tick();
    expect(sync.log).toEqual(['full', 'watch', 'full', 'watch', 'full', 'watch', 'full']);
    expect(sync.watches).toBe(1);
    expect(sync.pulls.at(-1)).toEqual({ uid: 7 });
    clock.advance(10_001);
    await tick();
    expect(sync.watches).toBe(2);
    expect(sync.pulls.at(-1)).toEqual({ uid: 8 });
    expect(sync.log).toEqual(['full', 'watch', 'full', 'watch', 'full', 'watch', 'full', 'full']);
    sync.changed!();
    await tick();
    expect(sync.log.at(-1)).toBe('watch');
    loop.stop();
    await running;
  });
});

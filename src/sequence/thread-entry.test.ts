/**
 * Subsequence threading on both stores: a lead moved to a sequence whose first email has no
 * subject keeps writing in the thread it has with its mailbox (the send material carries the old
 * enrollment's messages from that mailbox), and a lead who has no such thread is refused, with
 * the reason, rather than left to fail at send time.
 */
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { seededRandom } from '../common/random.ts';
import { SimClock } from '../sim/sim-clock.ts';
import { testBackends, useFreshStore, type TestStore } from '../../test/stores.ts';
import { makeWorld, type World } from '../../test/fixtures/world.ts';
import { loadSendMaterial } from '../sending/send-context.ts';
import { threadHeaders } from '../sending/compose/threading.ts';
import { applyDefinition } from './apply-definition.ts';
import { bulkEnroll } from './bulk-enroll.ts';
import { validateDefinition } from './definition.ts';
import { EnrollmentService } from './enrollment-service.ts';
import { moveEnrollment } from './move.ts';
import { threadEntry, threadRefusal, threadWarnings } from './thread-entry.ts';
import { toSequenceDef } from './sequence-repo.ts';

const T0 = Date.UTC(2026, 2, 2, 12, 0); // Monday
const DAY = 86_400_000;

const outreach = (pool: string[]) => ({
  key: 'outreach',
  name: 'Outreach',
  window: 'any',
  holidays: false,
  jitter_minutes: 0,
  mailboxes: pool,
  stop_rules: { on_reply: { not_interested: { move_to: 'nurture', after: '1 week' } } },
  steps: [
    { key: 'intro', type: 'email', subject: 'Quick question', body: 'Hello' },
    { key: 'bump', type: 'email', delay: '2 days', body: 'Bumping this' },
  ],
});
const nurture = (pool: string[]) => ({
  key: 'nurture',
  name: 'Nurture',
  window: 'any',
  holidays: false,
  jitter_minutes: 0,
  mailboxes: pool,
  steps: [
    { key: 'n1', type: 'email', body: 'Checking back in, as promised' },
    { key: 'n2', type: 'email', delay: '3 days', subject: 'A fresh start', body: 'New topic' },
  ],
});

describe('which step needs a thread, and why a lead is refused (pure)', () => {
  const step = (key: string, position: number, inThread = false, kind: 'email' | 'call' = 'email') => ({ id: key, key, position, kind, delay: { amount: 0, unit: 'days' as const }, archived: false, ...(inThread ? { inThread } : {}) });
  it('is the first live email the enrollment does not skip', () => {
    const steps = [step('ring', 0, false, 'call'), step('n1', 1, true), step('n2', 2)];
    expect(threadEntry({ steps }, [])?.key).toBe('n1');
    expect(threadEntry({ steps }, ['n1'])).toBeNull(); // a move that starts at n2 writes a new thread
    expect(threadEntry({ steps: [step('a', 0), step('b', 1, true)] }, [])).toBeNull();
  });
  it('says which of the three things is missing', () => {
    const entry = step('n1', 0, true);
    expect(threadRefusal(entry, { movedFrom: false, mailboxKept: false, threadFound: false })).toMatch(/only by a move .* that keeps their mailbox/);
    expect(threadRefusal(entry, { movedFrom: true, mailboxKept: false, threadFound: false })).toMatch(/mailbox is not in this sequence's pool/);
    expect(threadRefusal(entry, { movedFrom: true, mailboxKept: true, threadFound: false })).toMatch(/nothing was sent to the lead from that mailbox yet/);
    expect(threadRefusal(entry, { movedFrom: true, mailboxKept: true, threadFound: true })).toBeNull();
  });
  it('a definition whose first email has no subject is valid, and applying it says what that means', () => {
    const def = validateDefinition(nurture([]));
    expect(threadWarnings(def)).toEqual([expect.stringMatching(/^step n1: the first email has no subject.*refused \(no_thread\)/)]);
    expect(threadWarnings(validateDefinition(outreach([])))).toEqual([]);
  });
});

describe.each(testBackends())('subsequence threading through the store (%s)', (backend) => {
  const storeOf = useFreshStore(backend);
  let store: TestStore;
  let clock: SimClock;
  let world: World;
  let svc: EnrollmentService;
  let outreachId: string;
  let nurtureId: string;
  const random = seededRandom(80);

  async function setup(nurturePool: string[]) {
    store = storeOf();
    await sql`truncate table workspace, event cascade`.execute(store.db);
    clock = new SimClock(T0);
    world = await makeWorld(store, { leads: 3, mailboxes: 2, nowMs: T0, random, zones: ['UTC'], countries: [null] });
    svc = new EnrollmentService({ store, clock, random });
    const deps = { clock, random };
    outreachId = (await applyDefinition(store, deps, world.workspaceId, validateDefinition(outreach(['rep0@acme.test'])))).sequenceId;
    nurtureId = (await applyDefinition(store, deps, world.workspaceId, validateDefinition(nurture(nurturePool)))).sequenceId;
  }

  /** Records an outbound message of an enrollment, as the sender does once the transport took it. */
  async function sent(enrollmentId: string, mailboxId: string, messageId: string, subject: string | null, at: number) {
    await store.db.insertInto('message').values({ id: `00000000-0000-7000-8000-${String(Math.floor(at / 1000) % 1e12).padStart(12, '0')}`, workspace_id: world.workspaceId, mailbox_id: mailboxId, enrollment_id: enrollmentId, direction: 'outbound', message_id: messageId, subject, at: new Date(at) }).execute();
  }

  async function claimOf(enrollmentId: string, stepKey: string) {
    const step = await store.db.selectFrom('step').select('id').where('key', '=', stepKey).where('sequence_id', '=', nurtureId).executeTakeFirstOrThrow();
    const e = await store.db.selectFrom('enrollment').select('mailbox_id').where('id', '=', enrollmentId).executeTakeFirstOrThrow();
    return { requestId: '00000000-0000-7000-8000-0000000000aa', enrollmentId, mailboxId: e.mailbox_id!, stepId: step.id, variantId: null } as Parameters<typeof loadSendMaterial>[1];
  }

  it("a reply rule's move: the nurture's first email continues the old thread, its own-subject step starts anew", async () => {
    await setup(['rep0@acme.test', 'rep1@acme.test']);
    const [lead] = world.leadIds;
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: outreachId, leadIds: [lead!] });
    const old = await store.db.selectFrom('enrollment').select(['id', 'mailbox_id']).where('sequence_id', '=', outreachId).executeTakeFirstOrThrow();
    await sent(old.id, old.mailbox_id!, '<intro@acme.test>', 'Quick question', T0 + 1000);
    await sent(old.id, old.mailbox_id!, '<bump@acme.test>', 'Re: Quick question', T0 + 2 * DAY);
    // Another mailbox's message to the lead is another conversation: never threaded under.
    await sent(old.id, world.mailboxIds[1]!, '<other@acme.test>', 'Elsewhere', T0 + 2 * DAY + 1000);
    clock.advance(2 * DAY + 5000);
    await svc.apply(old.id, { type: 'reply', intent: 'not_interested', from: 'lead@x.test' });
    const moved = await store.db.selectFrom('enrollment').select(['id', 'mailbox_id', 'due_at']).where('sequence_id', '=', nurtureId).executeTakeFirstOrThrow();
    expect(moved.mailbox_id).toBe(old.mailbox_id);
    expect(moved.due_at!.getTime()).toBeGreaterThanOrEqual(clock.now() + 7 * DAY);
    const m = await loadSendMaterial(store.db, await claimOf(moved.id, 'n1'));
    expect(m.thread).toMatchObject({ messageIds: ['<intro@acme.test>', '<bump@acme.test>'], firstSubject: 'Quick question' });
    expect(m.template.subject).toBeNull();
    expect(threadHeaders(m.thread, m.template.subject ?? null)).toEqual({ subject: 'Re: Quick question', inReplyTo: '<bump@acme.test>', references: ['<intro@acme.test>', '<bump@acme.test>'], threadId: null });
    // The nurture's own messages join the same thread, after the old ones.
    await sent(moved.id, moved.mailbox_id!, '<n1@acme.test>', 'Re: Quick question', clock.now() + 8 * DAY);
    const later = await loadSendMaterial(store.db, await claimOf(moved.id, 'n2'));
    expect(later.thread?.messageIds).toEqual(['<intro@acme.test>', '<bump@acme.test>', '<n1@acme.test>']);
    expect(threadHeaders(later.thread, later.template.subject ?? null).subject).toBe('A fresh start');
  });

  it('a lead enrolled directly, or moved without its mailbox or a message, is refused with the reason', async () => {
    await setup(['rep0@acme.test']);
    const [a, b, c] = world.leadIds;
    const direct = await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: nurtureId, leadIds: [a!] });
    expect(direct.enrolled).toBe(0);
    expect(direct.refused).toEqual([expect.objectContaining({ leadId: a, reason: 'no_thread', detail: expect.stringMatching(/first email \(step n1\) has no subject.*only by a move/) })]);
    await bulkEnroll(store, { clock, random }, { workspaceId: world.workspaceId, sequenceId: outreachId, leadIds: [b!, c!] });
    const [eb, ec] = await store.db.selectFrom('enrollment').select(['id', 'lead_id']).where('sequence_id', '=', outreachId).orderBy('lead_id').execute();
    const deps = { store, clock, random, service: svc };
    // Nothing sent yet: no thread to continue.
    const early = await moveEnrollment(deps, { workspaceId: world.workspaceId, enrollmentId: eb!.id, sequenceId: nurtureId });
    expect(early).toMatchObject({ outcome: 'skipped', reason: 'no_thread', detail: expect.stringMatching(/nothing was sent/) });
    // Written from a mailbox the nurture's pool lacks.
    await store.db.updateTable('enrollment').set({ mailbox_id: world.mailboxIds[1]! }).where('id', '=', ec!.id).execute();
    await sent(ec!.id, world.mailboxIds[1]!, '<c1@acme.test>', 'Quick question', T0 + 1000);
    const elsewhere = await moveEnrollment(deps, { workspaceId: world.workspaceId, enrollmentId: ec!.id, sequenceId: nurtureId });
    expect(elsewhere).toMatchObject({ outcome: 'skipped', reason: 'no_thread', detail: expect.stringMatching(/not in this sequence's pool/) });
    // Starting at the step with its own subject needs no thread.
    const atN2 = await moveEnrollment(deps, { workspaceId: world.workspaceId, enrollmentId: eb!.id, sequenceId: nurtureId, startAtStep: 'n2' });
    expect(atN2.outcome).toBe('moved');
    // A person's move of a lead that was written to threads as the reply rule's does.
    await store.db.updateTable('enrollment').set({ mailbox_id: world.mailboxIds[0]! }).where('id', '=', ec!.id).execute();
    await sent(ec!.id, world.mailboxIds[0]!, '<c2@acme.test>', 'Quick question', T0 + 2000);
    const ok = await moveEnrollment(deps, { workspaceId: world.workspaceId, enrollmentId: ec!.id, sequenceId: nurtureId });
    expect(ok.outcome).toBe('moved');
    const m = await loadSendMaterial(store.db, await claimOf((ok as { newEnrollmentId: string }).newEnrollmentId, 'n1'));
    expect(m.thread?.messageIds).toEqual(['<c2@acme.test>']);
  });

  it('the step of a sequence whose first email has no subject is marked as one that needs a thread', async () => {
    await setup([]);
    const row = await store.db.selectFrom('sequence').selectAll().where('id', '=', nurtureId).executeTakeFirstOrThrow();
    const steps = await store.db.selectFrom('step').selectAll().where('sequence_id', '=', nurtureId).execute();
    const variants = await store.db.selectFrom('variant').selectAll().where('step_id', 'in', steps.map((s) => s.id)).execute();
    const def = toSequenceDef(row, steps, variants);
    expect(def.steps.map((s) => [s.key, s.inThread ?? false])).toEqual([
      ['n1', true],
      ['n2', false],
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import { seededRandom } from '../common/random.ts';
import { createConnector } from '../mailbox/connectors/registry.ts';
import type { MailboxRow } from '../mailbox/connectors/connector.ts';
import { applyDefinition } from '../sequence/apply-definition.ts';
import { bulkEnroll } from '../sequence/bulk-enroll.ts';
import { validateDefinition } from '../sequence/definition.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import { startGmailEmulator, type GmailEmulator } from '../sim/emulators/gmail/emulator.ts';
import { startGraphEmulator, type GraphEmulator } from '../sim/emulators/graph/emulator.ts';
import { rawMessage } from '../sim/emulators/messages.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { reconcileSent } from './reconcile-sent.ts';
import { stepMessageId } from './step-message-id.ts';

/**
 * `cadenza reconcile-sent` over a Gmail and a Microsoft 365 mailbox, through their real connectors
 * (registry.ts) on the emulators: the restored database has each intro queued and no record of
 * it, while both Sent folders hold the intros that went out after the restore point (sent with
 * their step-derived Message-IDs, as the outbox sends them), a person's own mail and a step of an
 * enrollment the database does not have. The reconcile records exactly the intros as sent, under
 * the copies' Message-IDs, and plans each follow-up; a second run finds everything recorded.
 */
const GMAIL = 'rep@gmail-rec.test';
const GRAPH = 'rep@graph-rec.test';
const LEADS = 5;

describe('reconcile-sent over Gmail and Graph mailboxes (emulators)', () => {
  let store: TestStore;
  let gmail: GmailEmulator;
  let graph: GraphEmulator;
  const random = seededRandom('reconcile-emulators');
  const deps = { clock: systemClock, random };
  let workspaceId: string;
  let since: number;

  const connectorOf = (m: MailboxRow) =>
    createConnector(
      m,
      {
        ...deps,
        credential: { kind: 'oauth', accessToken: 'unused: the token source below answers' },
        tokens: m.provider === 'gmail' ? gmail.tokenSource(m.email) : graph.tokenSource(m.email),
        baseUrls: { gmail: gmail.baseUrl, graph: graph.baseUrl },
        httpTimeoutMs: 5_000,
      },
      ['send'],
    );

  beforeAll(async () => {
    store = await freshStore(testBackends().includes('postgres') ? 'postgres' : 'pglite');
    gmail = await startGmailEmulator({ users: [GMAIL] });
    graph = await startGraphEmulator({ users: [GRAPH] });
    workspaceId = newId(Date.now(), random);
    await store.db.insertInto('workspace').values({ id: workspaceId, name: 'reconcile', time_zone: 'UTC' }).execute();
    for (const [email, provider] of [[GMAIL, 'gmail'], [GRAPH, 'graph']] as const) {
      await store.db.insertInto('mailbox').values({ id: newId(Date.now(), random), workspace_id: workspaceId, email, provider, settings: '{}', time_zone: 'UTC' }).execute();
    }
    const leadIds: string[] = [];
    for (let i = 0; i < LEADS * 2; i++) {
      const id = newId(Date.now(), random);
      leadIds.push(id);
      const email = `p${i}@prospects.test`;
      await store.db.insertInto('lead').values({ id, workspace_id: workspaceId, email, email_norm: email, first_name: 'Pat', time_zone: 'UTC' }).execute();
    }
    const seq = await applyDefinition(
      store,
      deps,
      workspaceId,
      validateDefinition({
        key: 'rec',
        name: 'Reconcile',
        window: 'any',
        holidays: false,
        jitter_minutes: 0,
        mailboxes: [GMAIL, GRAPH],
        steps: [
          { key: 'intro', type: 'email', subject: 'Hello', body: 'Hi {{first_name}}' },
          { key: 'follow', type: 'email', delay: '3 days', body: 'Following up' },
        ],
      }),
    );
    await bulkEnroll(store, deps, { workspaceId, sequenceId: seq.sequenceId, leadIds });
    const service = new EnrollmentService({ store, ...deps });
    while ((await service.fireDue(1_000)).length > 0);
    since = Date.now() - 1_000;
  }, 60_000);

  afterAll(async () => {
    await gmail?.close();
    await graph?.close();
    await store?.destroy();
  });

  it('records exactly the intros each Sent folder shows, plans their follow-ups, and is idempotent', async () => {
    const queued = await store.db
      .selectFrom('send_request as r')
      .innerJoin('mailbox as m', 'm.id', 'r.mailbox_id')
      .innerJoin('enrollment as e', 'e.id', 'r.enrollment_id')
      .innerJoin('lead as l', 'l.id', 'e.lead_id')
      .select(['r.id', 'r.enrollment_id', 'r.step_id', 'r.state', 'm.email as mailbox', 'm.id as mailbox_id', 'm.provider', 'l.email as lead'])
      .where('r.workspace_id', '=', workspaceId)
      .execute();
    expect(queued).toHaveLength(LEADS * 2);
    expect(new Set(queued.map((q) => q.provider))).toEqual(new Set(['gmail', 'graph']));
    expect(queued.every((q) => q.state === 'queued')).toBe(true);

    // What went out after the restore point, as the outbox sent it (the database no longer knows).
    const sent = new Map<string, string>();
    for (const q of queued) {
      const c = connectorOf({ id: q.mailbox_id, email: q.mailbox, provider: q.provider, settings: {} });
      try {
        const messageId = stepMessageId(q.mailbox, q.enrollment_id, q.step_id);
        const out = await c.send(rawMessage({ from: q.mailbox, to: [q.lead], subject: 'Hello', messageId }), { from: q.mailbox, to: [q.lead] }, { messageId });
        expect(out.kind).toBe('accepted');
        sent.set(q.id, messageId);
      } finally {
        await c.close();
      }
    }
    // A person's own mail, and the step of an enrollment the restored data lacks (the bad action's).
    const person = connectorOf({ id: 'x', email: GMAIL, provider: 'gmail', settings: {} });
    await person.send(rawMessage({ from: GMAIL, to: ['friend@x.test'], subject: 'Lunch?', messageId: '<CAF-lunch@mail.gmail.com>' }), { from: GMAIL, to: ['friend@x.test'] }, { messageId: '<CAF-lunch@mail.gmail.com>' });
    await person.close();
    const lost = stepMessageId(GRAPH, '0190a3c4-1111-7000-8000-0000000000ff', queued[0]!.step_id);
    const stray = connectorOf({ id: 'y', email: GRAPH, provider: 'graph', settings: {} });
    await stray.send(rawMessage({ from: GRAPH, to: ['w@prospects.test'], subject: 'Hello', messageId: lost }), { from: GRAPH, to: ['w@prospects.test'] }, { messageId: lost });
    await stray.close();

    const sentFolderOf = async (m: MailboxRow) => connectorOf(m);
    const report = await reconcileSent({ store, ...deps, sentFolderOf }, { since, workspaceId });
    expect(report.mailboxes.map((m) => [m.email, m.copies, m.recorded, m.unavailable])).toEqual([
      [GMAIL, LEADS + 1, LEADS, undefined],
      [GRAPH, LEADS + 1, LEADS, undefined],
    ]);
    expect(report).toMatchObject({ recorded: LEADS * 2, possiblySent: 0, alreadyRecorded: 0, unmatched: 2, conflicts: [] });

    const after = await store.db.selectFrom('send_request').select(['id', 'state', 'message_id', 'step_id', 'enrollment_id']).where('workspace_id', '=', workspaceId).execute();
    for (const q of queued) {
      const r = after.find((a) => a.enrollment_id === q.enrollment_id && a.step_id === q.step_id)!;
      expect([r.state, r.message_id]).toEqual(['sent', sent.get(q.id)]);
    }
    const outbound = await store.db.selectFrom('message').select(['message_id', 'to_addrs']).where('workspace_id', '=', workspaceId).where('direction', '=', 'outbound').execute();
    expect(outbound.map((m) => m.message_id).sort()).toEqual([...sent.values()].sort());
    // Each intro's step_sent planned its follow-up: every enrollment now waits on its timer for step two.
    const enrollments = await store.db.selectFrom('enrollment').select(['state', 'waiting_for', 'next_step_id']).where('workspace_id', '=', workspaceId).execute();
    const follow = (await store.db.selectFrom('step').select(['id', 'key']).execute()).find((s) => s.key === 'follow')!.id;
    expect(enrollments.every((e) => e.state === 'active' && e.waiting_for === 'timer' && e.next_step_id === follow)).toBe(true);

    const again = await reconcileSent({ store, ...deps, sentFolderOf }, { since, workspaceId });
    expect(again).toMatchObject({ recorded: 0, alreadyRecorded: LEADS * 2, unmatched: 2, conflicts: [] });
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedGraph, seedMember, seedWorkspace, type ObjectIds } from '../../../test/api.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { EnrollmentService } from '../../sequence/enrollment-service.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { fanOut } from './fanout.ts';
import { listBell } from './sql/bell.ts';
import { saveChoices } from './sql/preferences.ts';

const DAY = 86_400_000;

/**
 * Positive replies and meetings (0136), on both stores: a reply read as `meeting` is told like an
 * interested one; a reply whose intent becomes positive after it was stored (a relabel, a review
 * settled) is told then, once per message however often it is relabelled back and forth; a booked
 * meeting (the journal's meeting_booked, a call's outcome) is told to the enrollment's owner; a
 * member who turned a kind off hears nothing of it.
 */
describe.each(testBackends())('positive replies and meetings (%s)', (backend) => {
  let store: TestStore;
  let ws: string;
  let rep: string;
  let other: string;
  let g: ObjectIds;
  const random = seededRandom(`positive-${backend}`);
  const clock = new SimClock(Date.UTC(2026, 11, 1, 9));

  const reply = async (tag: string, intent: string | null, storedAt = new Date()) => {
    const id = newId(clock.now(), random);
    await store.db
      .insertInto('message')
      .values({ id, workspace_id: ws, mailbox_id: g.mailboxId!, enrollment_id: g.enrollmentId!, direction: 'inbound', message_id: `<${tag}-${backend}@prospects.test>`, subject: `Re: ${tag}`, at: new Date(clock.now()), intent, created_at: storedAt })
      .execute();
    return id;
  };
  const relabel = (id: string, intent: string | null) => store.db.updateTable('message').set({ intent }).where('id', '=', id).execute();
  const told = (key: string) => store.db.selectFrom('notification_event').select(['kind', 'title', 'user_id', 'link']).where('workspace_id', '=', ws).where('source_key', '=', key).execute();
  const bell = async (who: string) => (await listBell(store.db, ws, who, { limit: 50, unreadOnly: false })).items.map((i) => [i.kind, i.title]);

  beforeAll(async () => {
    store = await freshStore(backend);
    const w = await seedWorkspace(store, `Positive ${backend}`, `owner-${backend}@positive.test`);
    ws = w.workspaceId;
    rep = (await seedMember(store, ws, `rep-${backend}@positive.test`, 'member')).userId;
    other = (await seedMember(store, ws, `other-${backend}@positive.test`, 'member')).userId;
    g = await seedGraph(store, ws, `p-${backend}`, rep);
    // Everyone's events for the other member, who wants none of the positive ones.
    const off = { inApp: false, browser: false, email: false, slack: false };
    await saveChoices(store.db, ws, other, { kinds: { reply_positive: off, meeting_booked: off }, scope: 'all', digestEveryHours: 24 }, new Date(clock.now()));
    await fanOut({ store, clock });
  }, 120_000);
  afterAll(async () => {
    await store?.destroy();
  });

  it('tells a reply read as meeting like an interested one', async () => {
    const id = await reply('meet', 'meeting');
    expect(await told(`reply:${id}`)).toEqual([{ kind: 'reply_positive', title: `Meeting request from Lead p-${backend}`, user_id: rep, link: '/inbox' }]);
    expect(await fanOut({ store, clock })).toBe(1);
    expect((await bell(rep))[0]).toEqual(['reply_positive', `Meeting request from Lead p-${backend}`]);
  });

  it('tells a reply relabelled positive once, however often it is relabelled back and forth', async () => {
    // seedGraph's reply waits in the review queue with no intent: settled as interested, it is told.
    expect(await told(`reply:${g.messageId}`)).toEqual([]);
    await relabel(g.messageId!, 'interested');
    expect(await told(`reply:${g.messageId}`)).toEqual([{ kind: 'reply_positive', title: `Interested reply from Lead p-${backend}`, user_id: rep, link: '/inbox' }]);
    expect(await fanOut({ store, clock })).toBe(1);
    // Back and forth, and to the other positive intent: nothing new.
    await relabel(g.messageId!, 'question');
    await relabel(g.messageId!, 'interested');
    await relabel(g.messageId!, 'meeting');
    await relabel(g.messageId!, null);
    await relabel(g.messageId!, 'meeting');
    expect(await told(`reply:${g.messageId}`)).toHaveLength(1);
    expect(await fanOut({ store, clock })).toBe(0);
    // A reply stored positive is not told again when relabelled away and back.
    const yes = await reply('yes', 'interested');
    await relabel(yes, 'not_interested');
    await relabel(yes, 'interested');
    expect(await told(`reply:${yes}`)).toHaveLength(1);
    // A reply that is not positive, relabelled to another that is not, is not told.
    const no = await reply('no', 'not_interested');
    await relabel(no, 'question');
    expect(await told(`reply:${no}`)).toEqual([]);
    expect(await fanOut({ store, clock })).toBe(1);
    const replies = (await bell(rep)).filter(([k]) => k === 'reply_positive');
    expect(replies).toHaveLength(3);
  });

  it('does not tell a reply relabelled positive past the retention of its key', async () => {
    // Stored 91 days ago: an event of it may have been purged, so its key proves nothing any more.
    const old = await reply('old', 'question', new Date(Date.now() - 91 * DAY));
    await relabel(old, 'interested');
    expect(await told(`reply:${old}`)).toEqual([]);
    const recent = await reply('recent', 'question', new Date(Date.now() - 89 * DAY));
    await relabel(recent, 'interested');
    expect(await told(`reply:${recent}`)).toHaveLength(1);
    expect(await fanOut({ store, clock })).toBe(1);
  });

  it("tells a booked meeting to the enrollment's owner, once per meeting", async () => {
    const service = new EnrollmentService({ store, clock, random });
    await service.apply(g.enrollmentId!, { type: 'meeting_booked' });
    const rows = await store.db.selectFrom('notification_event').select(['kind', 'title', 'body', 'user_id', 'link']).where('workspace_id', '=', ws).where('kind', '=', 'meeting_booked').execute();
    expect(rows).toEqual([{ kind: 'meeting_booked', title: `Meeting booked with Lead p-${backend}`, body: `Booked · Sequence p-${backend}`, user_id: rep, link: `/leads/${g.leadId}` }]);
    // A call given another outcome is no meeting; one given meeting_booked is (here on an
    // enrollment the meeting finished: journalled as ignored, still a meeting).
    await service.apply(g.enrollmentId!, { type: 'call_outcome', stepId: g.stepId!, outcome: 'connected' });
    await service.apply(g.enrollmentId!, { type: 'call_outcome', stepId: g.stepId!, outcome: 'meeting_booked' });
    const titles = await store.db.selectFrom('notification_event').select('body').where('workspace_id', '=', ws).where('kind', '=', 'meeting_booked').orderBy('id').execute();
    expect(titles.map((t) => t.body)).toEqual([`Booked · Sequence p-${backend}`, `Booked on a call · Sequence p-${backend}`]);
    expect(await fanOut({ store, clock })).toBe(2);
    expect(await fanOut({ store, clock })).toBe(0);
    expect((await bell(rep)).filter(([k]) => k === 'meeting_booked')).toHaveLength(2);
  });

  it('tells nothing of a kind to a member who turned it off', async () => {
    // The other member asked for every event of the workspace, and none of these two kinds.
    // It hears of the rest (the seeded call task due): its scope takes the rep's events.
    expect(await bell(other)).toEqual([['task_due', 'Call due: lead-p-' + backend + '@prospects.test']]);
    const slack = await store.db.selectFrom('notification_slack').select('id').where('user_id', '=', other).execute();
    expect(slack).toEqual([]);
  });
});

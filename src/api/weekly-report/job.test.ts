import { DateTime } from 'luxon';
import PostalMime from 'postal-mime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedWorkspace } from '../../../test/api.ts';
import { smtpSink } from '../../../test/mail/smtp-sink.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { validateDefinition } from '../../sequence/definition.ts';
import { SimClock } from '../../sim/sim-clock.ts';
import { smtpSystemMailer, type SystemMailer } from '../system-mailer.ts';
import { sendDueWeeklyReports, type WeeklyReportDeps } from './job.ts';

const at = (iso: string) => DateTime.fromISO(iso, { setZone: true }).toMillis();
const QUARTER = 15 * 60_000;

/**
 * The weekly report's job on a simulated clock (issue 18), through the real system mailer to an
 * in-process SMTP server: three weeks and a day of quarter-hour ticks across Europe's change to
 * summer time, two processes running the job at every tick. Exactly one report per ISO week, at
 * Monday 08:00 Berlin time (07:00 UTC in winter, 06:00 in summer); none for a workspace that has it
 * off or never set it; a refused send tried again at the next tick; the owner by default, the
 * members who opt in once anyone does.
 */
describe.each(testBackends())('weekly report job (%s)', (backend) => {
  let store: TestStore;
  let mailer: SystemMailer;
  let sink: Awaited<ReturnType<typeof smtpSink>>;
  const received: Array<{ at: number; to: string[]; raw: string }> = [];
  let refuseNext = false;
  const clock = new SimClock(at('2026-03-16T00:00:00Z'));
  let ids: Record<string, string>;

  beforeAll(async () => {
    sink = await smtpSink((m) => {
      if (refuseNext) {
        refuseNext = false;
        return Object.assign(new Error('4.3.0 Try again later'), { responseCode: 451 });
      }
      received.push({ at: clock.now(), ...m });
      return null;
    });
    mailer = smtpSystemMailer({ url: sink.url, from: 'cadenza@charts.test' });
    store = await freshStore(backend);
    const on = await seedWorkspace(store, 'Weekly Co', 'owner@weekly.test');
    const off = await seedWorkspace(store, 'Quiet Co', 'owner@quiet.test');
    await seedWorkspace(store, 'Never Co', 'owner@never.test');
    const random = seededRandom(`weekly-${backend}`);
    const member = newId(clock.now(), random);
    await store.db.insertInto('app_user').values({ id: member, workspace_id: on.workspaceId, email: 'rep@weekly.test', role: 'member' }).execute();
    await store.db.updateTable('workspace').set({ time_zone: 'Europe/Berlin' }).where('id', 'in', [on.workspaceId, off.workspaceId]).execute();
    await store.db
      .insertInto('weekly_report_setting')
      .values([
        { workspace_id: on.workspaceId, enabled: true, weekday: 1, hour: 8, updated_at: new Date(clock.now()) },
        { workspace_id: off.workspaceId, enabled: false, weekday: 1, hour: 8, updated_at: new Date(clock.now()) },
      ])
      .execute();
    // Three sends in the week of 16 March, two the week before: the report of 23 March says so.
    const { sequenceId } = await applyDefinition(store, { clock: systemClock, random }, on.workspaceId, validateDefinition({ key: 'outbound', name: 'Outbound', window: 'any', steps: [{ key: 'intro', type: 'email', subject: 'Hi', body: 'Hi there' }] }));
    const step = (await store.db.selectFrom('step').select('id').where('sequence_id', '=', sequenceId).executeTakeFirstOrThrow()).id;
    const sent = (iso: string) => ({ workspace_id: on.workspaceId, enrollment_id: null, type: 'step_sent', at: new Date(at(iso)), payload: JSON.stringify({ event: { type: 'step_sent', stepId: step } }) });
    await store.db.insertInto('event').values([sent('2026-03-17T10:00:00Z'), sent('2026-03-18T10:00:00Z'), sent('2026-03-22T20:00:00Z'), sent('2026-03-10T10:00:00Z'), sent('2026-03-11T10:00:00Z')]).execute();
    ids = { on: on.workspaceId, member };
  }, 60_000);
  afterAll(async () => {
    mailer?.close();
    await sink?.close();
    await store?.close();
  });

  it('sends one report per ISO week at the local hour across the change to summer time, whatever the processes', async () => {
    const process = (owner: string): WeeklyReportDeps => ({ store, clock, mailer, owner, appUrl: 'https://cadenza.example.test/' });
    const a = process('api-a');
    const b = process('api-b');
    for (let t = clock.now(); t <= at('2026-04-06T12:00:00Z'); t += QUARTER) {
      clock.advanceTo(t);
      // The member opts in after the second report; the fourth Monday's first try is refused.
      if (t === at('2026-03-24T00:00:00Z')) await store.db.insertInto('weekly_report_recipient').values({ workspace_id: ids.on!, user_id: ids.member!, created_at: new Date(t) }).execute();
      if (t === at('2026-04-06T06:00:00Z')) refuseNext = true;
      // Two processes at once, the second one restarted (a fresh deps) every day.
      await Promise.all([sendDueWeeklyReports(a), sendDueWeeklyReports(t % 86_400_000 === 0 ? process(`api-b-${t}`) : b)]);
    }
    expect(received.map((r) => new Date(r.at).toISOString())).toEqual([
      '2026-03-16T07:00:00.000Z',
      '2026-03-23T07:00:00.000Z',
      // Summer time in Berlin from 29 March: 08:00 is 06:00 UTC.
      '2026-03-30T06:00:00.000Z',
      // Refused at 06:00, sent at the next tick.
      '2026-04-06T06:15:00.000Z',
    ]);
    expect(received.map((r) => r.to)).toEqual([['owner@weekly.test'], ['owner@weekly.test'], ['rep@weekly.test'], ['rep@weekly.test']]);
    const runs = await store.db.selectFrom('weekly_report_run').select(['workspace_id', 'iso_week', 'attempts', 'recipients', 'error']).orderBy('iso_week').execute();
    expect(runs).toEqual([
      { workspace_id: ids.on, iso_week: '2026-W12', attempts: 1, recipients: 1, error: null },
      { workspace_id: ids.on, iso_week: '2026-W13', attempts: 1, recipients: 1, error: null },
      { workspace_id: ids.on, iso_week: '2026-W14', attempts: 1, recipients: 1, error: null },
      { workspace_id: ids.on, iso_week: '2026-W15', attempts: 2, recipients: 1, error: null },
    ]);
    // The report of 23 March: the week of 16-22 March against the one before, and the CSV attached.
    const second = await PostalMime.parse(received[1]!.raw);
    expect(second.subject).toBe('Weekly Co: 3 sends, 0 replies, 0 meetings (2026-03-16 to 2026-03-22)');
    expect(second.text).toContain('2026-03-16 to 2026-03-22 (Europe/Berlin), compared with the 7 days before.');
    expect(second.text).toMatch(/^Sends\s+3 {3}\+50% \(2 the week before\)$/m);
    expect(second.text).toContain('The Analytics screen: https://cadenza.example.test/analytics');
    expect(second.attachments.map((x) => [x.filename, x.mimeType])).toEqual([['analytics-by-sequence-2026-03-16-to-2026-03-22.csv', 'text/csv']]);
    const csv = typeof second.attachments[0]!.content === 'string' ? second.attachments[0]!.content : new TextDecoder().decode(second.attachments[0]!.content);
    expect(csv.split('\r\n')[0]).toMatch(/^sequence,id,sends,opened,/);
    // The sends are the intro's: the sequence's row, in the mail's top sequences and the CSV.
    expect(second.text).toContain('1. Outbound: 3 sends, 0 replies (0.0%), 0 interested, 0 meetings, bounce rate 0.0%');
    expect(csv.split('\r\n')[1]).toMatch(/^Outbound,[0-9a-f-]{36},3,/);
  }, 240_000);
});

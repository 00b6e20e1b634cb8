import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import { seededRandom } from '../../src/common/random.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { EnrollmentService } from '../../src/sequence/enrollment-service.ts';
import { chromiumSkipReason, screenshot } from '../web/chromium.ts';
import { dialerWebSuite } from './browser.ts';
import { carrier, stopAllSipp, telBedSkipReason } from './telbed.ts';
import { zoneAtHour } from '../zone-at-hour.ts';

/**
 * The rep's day in the real web app: the Tasks screen's power dialer over the telephony bed. A
 * sequence's call step falls due; the rep presses Call, the call's record is opened, the browser
 * (a fake microphone) registers over WSS with the credential the app issued and dials through
 * Kamailio and rtpengine to sipp playing the prospect; hang-up, notes and the outcome move the
 * enrollment on. A busy line is logged with one key and the step's retry rule brings the call back
 * later. Screenshots power-dialer-01..02.
 */
const skip = telBedSkipReason() ?? chromiumSkipReason();


describe.skipIf(skip !== null)(`the power dialer in the web app${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = dialerWebSuite('dialer');
  let page: Page;
  let workspaceId: string;
  const db = () => web.app.store.db;
  const leads = { ana: '00000000-0000-4000-8000-00000000da01', bo: '00000000-0000-4000-8000-00000000da02' };

  beforeAll(async () => {
    page = await web.newPage();
    await web.setupOwner(page, { email: 'rep@dial.test', password: 'a long enough password', workspace: 'Dial Co' });
    workspaceId = (await db().selectFrom('workspace').select('id').executeTakeFirstOrThrow()).id;
    // Midday where the leads are, so their calling hours allow the calls.
    const zone = zoneAtHour(12);
    for (const [i, [name, id]] of Object.entries(leads).entries()) {
      const email = `${name}@prospect.test`;
      await db()
        .insertInto('lead')
        .values({ id, workspace_id: workspaceId, email, email_norm: email, first_name: name === 'ana' ? 'Ana' : 'Bo', company: 'Acme', phone: `+1 415 555 01${20 + i}`, phone_e164: `+1415555012${i}`, phone_status: 'valid', time_zone: zone })
        .execute();
    }
    const deps = { clock: systemClock, random: seededRandom('dialer') };
    const def = validateDefinition({
      key: 'calls',
      name: 'Calls first',
      window: 'any',
      jitter_minutes: 0,
      steps: [
        { key: 'call', type: 'call', title: 'Intro call', retry: { attempts: 1, after: '3 hours', on: ['busy', 'no_answer'] } },
        { key: 'mail', type: 'email', delay: '2 days', subject: 'After our call', body: 'Hi {{first_name}}' },
      ],
    });
    const seq = await applyDefinition(web.app.store, deps, workspaceId, def);
    await bulkEnroll(web.app.store, deps, { workspaceId, sequenceId: seq.sequenceId, leadIds: [leads.ana] });
    await new EnrollmentService({ store: web.app.store, ...deps }).fireDue(10);
    // Bo's call comes due a moment later: the dialer takes the oldest first.
    await new Promise((r) => setTimeout(r, 20));
    await bulkEnroll(web.app.store, deps, { workspaceId, sequenceId: seq.sequenceId, leadIds: [leads.bo] });
    await new EnrollmentService({ store: web.app.store, ...deps }).fireDue(10);
  }, 120_000);

  const enrollment = (leadId: string) => db().selectFrom('enrollment').select(['state', 'waiting_for']).where('lead_id', '=', leadId).executeTakeFirstOrThrow();
  const callsOf = (leadId: string) => db().selectFrom('phone_call').selectAll().where('lead_id', '=', leadId).orderBy('created_at').execute();

  it('calls the first lead from the Tasks screen, hears the line, and the outcome moves the sequence on', async () => {
    const uas = carrier('uas-answer-play.xml');
    try {
      await page.getByRole('link', { name: 'Tasks' }).click();
      const dialer = page.getByRole('region', { name: 'Power dialer' });
      await dialer.getByText('call 1 of 2 due now').waitFor();
      await dialer.getByText('+14155550120').waitFor();
      const panel = dialer.getByRole('group', { name: 'Phone call to +14155550120' });
      await panel.getByText('Ready').waitFor({ timeout: 20_000 });
      const clicked = Date.now();
      await panel.getByRole('button', { name: 'Call +14155550120' }).click();
      await panel.getByText(/^In call/).waitFor({ timeout: 20_000 });
      const answeredMs = Date.now() - clicked;
      await screenshot(page, 'power-dialer-01-in-call');
      // Outcomes wait for the end of the call.
      expect(await dialer.getByRole('button', { name: 'Connected' }).isDisabled()).toBe(true);
      await page.waitForTimeout(1500);
      await panel.getByRole('button', { name: 'Hang up the call to +14155550120' }).click();
      await dialer.getByText('Outcome: the call suggests connected').waitFor({ timeout: 10_000 });
      await dialer.getByLabel('Notes').fill('Wants pricing for 40 seats');
      await screenshot(page, 'power-dialer-02-outcome');
      await dialer.getByRole('button', { name: 'Connected' }).click();
      // Ana's call is done: the dialer moves to Bo's.
      await dialer.getByText('call 1 of 1 due now').waitFor({ timeout: 10_000 });
      const [c] = await callsOf(leads.ana);
      expect(c).toMatchObject({ direction: 'outbound', source: 'dialer', state: 'ended', outcome: 'connected', suggested: 'connected', end_cause: 'hangup', notes: 'Wants pricing for 40 seats', remote_e164: '+14155550120' });
      expect(c!.sip_call_id).toBeTruthy();
      expect(c!.duration_ms).toBeGreaterThan(1000);
      expect(await enrollment(leads.ana)).toEqual({ state: 'active', waiting_for: 'timer' });
      console.log(`power dialer: click to answered ${answeredMs} ms, call ${c!.duration_ms} ms`);
    } finally {
      uas.stop();
      await stopAllSipp();
    }
  }, 90_000);

  it('a busy line is logged with one key and the step tries the call again later', async () => {
    const uas = carrier('uas-busy.xml');
    try {
      const dialer = page.getByRole('region', { name: 'Power dialer' });
      const panel = dialer.getByRole('group', { name: 'Phone call to +14155550121' });
      await panel.getByText('Ready').waitFor({ timeout: 20_000 });
      await page.keyboard.press('c');
      await panel.getByText('Busy').waitFor({ timeout: 20_000 });
      await dialer.getByText('Outcome: the call suggests busy').waitFor({ timeout: 10_000 });
      await page.keyboard.press('4');
      // No call is due now: Bo's comes back in three hours.
      await dialer.waitFor({ state: 'detached', timeout: 10_000 });
      const [c] = await callsOf(leads.bo);
      expect(c).toMatchObject({ state: 'ended', outcome: 'busy', end_cause: 'busy', attempt: 1 });
      const task = await db().selectFrom('task').select(['task.state', 'task.attempts', 'task.due_at']).innerJoin('enrollment', 'enrollment.id', 'task.enrollment_id').where('enrollment.lead_id', '=', leads.bo).executeTakeFirstOrThrow();
      expect(task.state).toBe('open');
      expect(task.attempts).toBe(1);
      expect(task.due_at.getTime() - Date.now()).toBeGreaterThan(2.9 * 3_600_000);
      expect(await enrollment(leads.bo)).toEqual({ state: 'active', waiting_for: 'task' });
      expect(web.errors).toEqual([]);
    } finally {
      uas.stop();
      await stopAllSipp();
    }
  }, 90_000);
});

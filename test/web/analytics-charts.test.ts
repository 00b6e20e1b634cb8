import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * The Analytics screen's charts in headless Chromium against the real app (issue 18): the funnel,
 * reply time after send, the best send hours in the prospect's time (said in words, with the
 * weekday grid), a mailbox's sends, bounce rate and warmup placement per day, each drawn by uPlot;
 * and the weekly report by email turned on, its day and hour chosen, saved and still there after a
 * reload. Screenshots and axe at 1440×900 and 390×844.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'cara@cadenza.test', password: 'a long enough password', workspace: 'Charts Co' };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.skipIf(skip !== null)(`analytics charts and the weekly report in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-analytics-charts', roles: ['api'] });

  it('draws the four charts with their figures and saves the weekly report', async () => {
    const { app } = web;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 }, timezoneId: 'UTC' });
    await web.setupOwner(page, OWNER);
    const db = app.store.db;
    const ws = (await db.selectFrom('workspace').select('id').where('name', '=', OWNER.workspace).executeTakeFirstOrThrow()).id;
    await db.updateTable('workspace').set({ time_zone: 'UTC' }).where('id', '=', ws).execute();
    const random = seededRandom('web-analytics-charts');
    const id = () => newId(Date.now(), random);
    const { sequenceId } = await applyDefinition(app.store, { clock: systemClock, random }, ws, validateDefinition({ key: 'outbound', name: 'Outbound', window: 'any', steps: [{ key: 'intro', type: 'email', subject: 'Hi', body: 'Hi there' }] }));
    const step = (await db.selectFrom('step').select('id').where('sequence_id', '=', sequenceId).executeTakeFirstOrThrow()).id;
    const mailbox = id();
    await db.insertInto('mailbox').values({ id: mailbox, workspace_id: ws, email: 'cara@charts.test', provider: 'smtp_imap' }).execute();
    // 50 prospects: 25 in Berlin sent the intro at 08:00 UTC three days ago, 25 with no zone of
    // their own (the workspace's UTC) at 15:00 UTC. 5 and 1 of them replied; 2 bounced.
    const T = DateTime.utc().startOf('day').minus({ days: 3 }).plus({ hours: 8 }).toMillis();
    const enrollments: string[] = [];
    for (let i = 0; i < 50; i++) {
      const lead = id();
      await db.insertInto('lead').values({ id: lead, workspace_id: ws, email: `p${i}@prospects.test`, email_norm: `p${i}@prospects.test` }).execute();
      const en = id();
      enrollments.push(en);
      await db.insertInto('enrollment').values({ id: en, workspace_id: ws, sequence_id: sequenceId, lead_id: lead, mailbox_id: mailbox, state: 'active', time_zone: i < 25 ? 'Europe/Berlin' : 'UTC', zone_source: i < 25 ? 'lead' : 'workspace' }).execute();
    }
    const sendAt = (i: number) => (i < 25 ? T : T + 7 * HOUR);
    const ev = (i: number, type: string, at: number, event: Record<string, unknown> = {}) => ({ workspace_id: ws, enrollment_id: enrollments[i]!, type, at: new Date(at), payload: JSON.stringify({ event: { type, ...event } }) });
    await db
      .insertInto('event')
      .values([
        ...enrollments.map((_, i) => ev(i, 'step_sent', sendAt(i), { stepId: step })),
        ...[0, 1, 2, 3, 4].map((i) => ev(i, 'reply', T + (i + 1) * 30 * 60_000)),
        ev(25, 'reply', T + 7 * HOUR + 2 * DAY),
        ev(30, 'bounce', T + 7 * HOUR + 60_000, { hard: true }),
        ev(31, 'bounce', T + 7 * HOUR + 60_000, { hard: false }),
        ev(0, 'meeting_booked', T + DAY),
      ])
      .execute();
    const warm = (n: number, folder: 'inbox' | 'junk') => ({ id: id(), pool: 'default', kind: 'first' as const, message_id: `<w${n}@charts.test>`, sender_mailbox_id: mailbox, sender_address: 'cara@charts.test', receiver_address: `r${n}@peer.test`, planned_at: new Date(T), sent_at: new Date(T), received_at: new Date(T + HOUR), received_folder: folder });
    await db.insertInto('warmup_mail').values([warm(1, 'inbox'), warm(2, 'inbox'), warm(3, 'inbox'), warm(4, 'junk')]).execute();

    await page.goto(`${app.url}/analytics`);
    await page.getByTestId('analytics-zone').selectOption('UTC');
    await expect.poll(() => page.getByTestId('kpi-sends').textContent(), { timeout: 15_000 }).toBe('50');
    // Six uPlot charts: the two per-day ones, the funnel, reply times, send hours, mailbox health.
    await expect.poll(() => page.locator('.uplot canvas').count()).toBe(6);
    const steps = page.getByTestId('funnel-steps').locator('li');
    await expect.poll(() => steps.first().textContent()).toBe('Sent 50');
    expect(await steps.nth(1).textContent()).toBe('Delivered 48 · 96.0% of the stage before');
    // No open was tracked and nobody wrote an interested reply here: no conversion from an empty stage.
    expect(await steps.nth(2).textContent()).toBe('Opened by a person 0 · 0.0% of the stage before');
    expect(await steps.nth(3).textContent()).toBe('Clicked 0');
    expect(await steps.nth(4).textContent()).toBe('Replied 6');
    expect(await steps.nth(6).textContent()).toBe('Meetings 1');
    // Replies 30 min, 1 h, 1.5 h, 2 h, 2.5 h and 2 days after their email: half within 1.5 h.
    expect(await page.getByTestId('reply-times-summary').textContent()).toBe('6 replies; half came within 1.5 h of the email they answered.');
    // Berlin's prospects got theirs at 09:00 or 10:00 their time; the others at 15:00.
    const berlinHour = DateTime.fromMillis(T, { zone: 'Europe/Berlin' }).hour;
    expect(await page.getByTestId('best-hours').textContent()).toMatch(new RegExp(`^Best hours in the prospect's time, by reply rate: ${berlinHour}:00–${berlinHour + 1}:00 \\(20\\.0% of 25 sends\\), 15:00–16:00 \\(4\\.0% of 25 sends\\)\\.`));
    await page.getByTestId('send-hours-weekday').check();
    await expect.poll(() => page.getByTestId('send-hours-heat').locator('td', { hasText: '25' }).count()).toBe(2);
    expect(await page.getByTestId('placement-note').textContent()).toMatch(/\(4 placed\)/);
    await page.getByTestId('mailbox-health-pick').selectOption({ label: 'cara@charts.test' });
    await expect.poll(() => page.getByTestId('mailbox-health-chart').locator('tbody tr', { has: page.locator(`th:text-is("${DateTime.fromMillis(T, { zone: 'UTC' }).toISODate()!.slice(5)}")`) }).locator('td').allTextContents()).toEqual(['50', '4.0%', '75.0%']);

    // The weekly report: off, turned on for Friday 17:00, saved, and so after a reload.
    const form = page.getByTestId('weekly-report');
    await expect.poll(() => page.getByTestId('weekly-report-status').textContent()).toMatch(/^Off: no report is sent\./);
    await page.getByTestId('weekly-report-enabled').check();
    await page.getByTestId('weekly-report-weekday').selectOption({ label: 'Friday' });
    await page.getByTestId('weekly-report-hour').selectOption({ label: '17:00' });
    await page.getByTestId('weekly-report-save').click();
    await expect.poll(() => form.getByRole('status').textContent()).toBe('Weekly report saved: it is on.');
    expect(await page.getByTestId('weekly-report-status').textContent()).toMatch(/^Next report: Friday.*17:00 \(UTC\), to /);
    // Checked once the server has it (the box shows the stored choice): a click, not check().
    await page.getByTestId('weekly-report-mine').click();
    await expect.poll(() => form.getByRole('status').textContent()).toBe('You will receive the weekly report.');
    await page.reload();
    await expect.poll(() => page.getByTestId('weekly-report-enabled').isChecked(), { timeout: 15_000 }).toBe(true);
    expect(await page.getByTestId('weekly-report-weekday').inputValue()).toBe('5');
    expect(await page.getByTestId('weekly-report-hour').inputValue()).toBe('17');
    expect(await page.getByTestId('weekly-report-mine').isChecked()).toBe(true);
    const stored = await db.selectFrom('weekly_report_setting').select(['enabled', 'weekday', 'hour']).where('workspace_id', '=', ws).executeTakeFirstOrThrow();
    expect(stored).toEqual({ enabled: true, weekday: 5, hour: 17 });

    // Every chart's table open, the weekday grid shown: axe and a screenshot at a laptop's size and a phone's.
    await page.getByTestId('analytics-zone').selectOption('UTC');
    await expect.poll(() => page.locator('.uplot canvas').count()).toBe(6);
    await page.getByTestId('send-hours-weekday').check();
    for (const summary of await page.locator('details.chart-table summary').all()) if (!(await summary.evaluate((s) => (s.parentElement as HTMLDetailsElement).open))) await summary.click();

    // Every table of the screen as CSV (issue 18), written from the rows it shows.
    const csv = async (what: string, file: string) => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${what} as CSV` }).click()]);
      expect(download.suggestedFilename()).toBe(file);
      return readFileSync((await download.path())!, 'utf8').trimEnd().split('\r\n');
    };
    expect(await csv('the stage table', 'funnel.csv')).toEqual(expect.arrayContaining(['Stage,Count', 'Sent,50', 'Replied,6', 'Meetings,1']));
    const times = await csv('the time to reply table', 'reply-times.csv');
    expect(times[0]).toBe('Time to reply,Replies');
    expect(times.slice(1).map((l) => l.split(',')[0])).toEqual(['Under 1 hour', '1–4 hours', '4–24 hours', '1–3 days', '3–7 days', 'Over 7 days']);
    expect(times.slice(1).reduce((n, l) => n + Number(l.split(',')[1]), 0)).toBe(6);
    const hoursCsv = await csv('the hour table', 'send-hours.csv');
    expect(hoursCsv[0]).toBe('Hour,Sends,Reply rate (share)');
    expect(hoursCsv).toContain(`${berlinHour},25,0.2`);
    const grid = await csv('sends by weekday and hour', 'send-hours-by-weekday.csv');
    expect(grid[0]).toBe('Weekday,Hour,Sends,Replies,Reply rate (share)');
    expect(grid.filter((l) => l.split(',')[2] === '25')).toHaveLength(2);
    expect(await csv('the day table', 'mailbox-health.csv')).toContain(`${DateTime.fromMillis(T, { zone: 'UTC' }).toISODate()},50,0.04,0.75`);
    const sent = await csv('the sent per day table', 'sent-per-day.csv');
    expect(sent[0]).toBe('day,Sends,Bounces,Unsubscribes');
    expect(sent.slice(1).reduce((n, l) => n + Number(l.split(',')[1]), 0)).toBe(50);
    const perStep = await csv('the per-step funnel', 'per-step.csv');
    expect(perStep[0]).toBe('Sequence / step,Sent,Replied,Reply rate (share)');
    expect(perStep.slice(1).reduce((n, l) => n + Number(l.split(',').at(-3)), 0)).toBe(50);
    const boxes = await csv('the per-mailbox table', 'per-mailbox.csv');
    expect(boxes[0]).toBe('Mailbox,Health,Why,Sent,Replies,Hard bounces,Soft bounces,Hard bounce rate (share)');
    expect(boxes.find((l) => l.startsWith('cara@charts.test,'))).toMatch(/^cara@charts\.test,\w+,[^,]*,50,/);
    expect((await csv('the reply-to-stop figures', 'reply-to-stop.csv'))[0]).toBe('Messages,Half within (ms),9 in 10 within (ms),99 in 100 within (ms)');

    const found: string[] = [];
    for (const [width, height] of [[1440, 900], [390, 844]] as const) {
      await page.setViewportSize({ width, height });
      await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      found.push(...(await blockingViolations(page, `analytics charts ${width}`)));
      await page.getByTestId('funnel-card').scrollIntoViewIfNeeded();
      await screenshot(page, `analytics-charts-${width}`);
      await page.getByTestId('weekly-report').scrollIntoViewIfNeeded();
      await screenshot(page, `analytics-weekly-report-${width}`);
    }
    expect(found).toEqual([]);
    expect(web.errors).toEqual([]);
  }, 180_000);
});

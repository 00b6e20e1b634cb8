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
 * The Analytics screen in headless Chromium against the real app (issue 18): the headline cards
 * with the change from the previous period, opens by a person apart from an image proxy's, the
 * per-day charts drawn by the charting library, the days counted in the reader's own time zone
 * (a send at 23:30 UTC is the next day in Berlin) or another one chosen, the CSV download, and the
 * page inside a phone's width.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'lea@cadenza.test', password: 'a long enough password', workspace: 'Acme' };
const DAY = 86_400_000;

describe.skipIf(skip !== null)(`analytics screen${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-analytics', roles: ['api'] });

  it('shows the period against the one before, in the reader\'s time zone, with charts and a CSV', async () => {
    const { app } = web;
    const page = await web.newPage({ viewport: { width: 1440, height: 1000 }, timezoneId: 'Europe/Berlin' });
    await web.setupOwner(page, OWNER);
    const db = app.store.db;
    const ws = await db.selectFrom('workspace').select('id').where('name', '=', 'Acme').executeTakeFirstOrThrow();
    const random = seededRandom('web-analytics');
    // Three days ago at 23:30 UTC: the next day in Berlin (UTC+1 in winter, +2 in summer).
    const lateSend = DateTime.utc().startOf('day').minus({ days: 3 }).plus({ hours: 23, minutes: 30 }).toMillis();
    const ev = (type: string, at: number) => ({ workspace_id: ws.id, enrollment_id: null, type, at: new Date(at), payload: JSON.stringify({ event: { type } }) });
    // This period: 3 sends (one of them the late one), 1 reply, 1 meeting; the 30 days before: 2 sends.
    const { sequenceId } = await applyDefinition(app.store, { clock: systemClock, random }, ws.id, validateDefinition({ key: 'outbound', name: 'Outbound', window: 'any', steps: [{ key: 'intro', type: 'email', subject: 'Hi', body: 'Hi there' }] }));
    const step = (await db.selectFrom('step').select('id').where('sequence_id', '=', sequenceId).executeTakeFirstOrThrow()).id;
    const sent = (at: number) => ({ ...ev('step_sent', at), payload: JSON.stringify({ event: { type: 'step_sent', stepId: step } }) });
    await db.insertInto('event').values([sent(lateSend), sent(lateSend - 5 * DAY), sent(lateSend - 6 * DAY), ev('reply', lateSend - 4 * DAY), ev('meeting_booked', lateSend - 4 * DAY), sent(lateSend - 40 * DAY), sent(lateSend - 41 * DAY)]).execute();
    // One email opened by a person (twice) and fetched by an image proxy; another only by the proxy.
    const [r1, r2] = [newId(lateSend, random), newId(lateSend, random)];
    await db
      .insertInto('tracking_event')
      .values([
        { workspace_id: ws.id, send_request_id: r1, kind: 'open', verdict: 'proxy', at: new Date(lateSend - 5 * DAY + 60_000) },
        { workspace_id: ws.id, send_request_id: r1, kind: 'open', verdict: 'human', at: new Date(lateSend - 5 * DAY + 3_600_000) },
        { workspace_id: ws.id, send_request_id: r1, kind: 'open', verdict: 'human', at: new Date(lateSend - 4 * DAY) },
        { workspace_id: ws.id, send_request_id: r2, kind: 'open', verdict: 'proxy', at: new Date(lateSend - 6 * DAY + 60_000) },
      ])
      .execute();

    await page.goto(`${app.url}/analytics`);
    await expect.poll(() => page.getByTestId('kpi-sends').textContent(), { timeout: 15_000 }).toBe('3');
    expect(await page.getByTestId('kpi-opened').textContent()).toBe('1');
    expect(await page.getByTestId('kpi-meetings').textContent()).toBe('1');
    expect(await page.getByTestId('kpi-change-sends').textContent()).toBe("+50% vs 2 before");
    expect(await page.getByTestId('analytics-zone').inputValue()).toBe('Europe/Berlin');
    // The per-day charts, the funnel, reply times, send hours and mailbox health are drawn by uPlot, on canvases.
    await expect.poll(() => page.locator('.uplot canvas').count()).toBe(6);

    const berlinDay = DateTime.fromMillis(lateSend, { zone: 'Europe/Berlin' }).toISODate()!;
    const utcDay = DateTime.fromMillis(lateSend, { zone: 'UTC' }).toISODate()!;
    const sendsOn = async (day: string) => {
      const row = page.locator('details.chart-table').first().locator('tr', { has: page.locator(`th:text-is("${day}")`) });
      return (await row.count()) === 0 ? 0 : Number(await row.locator('td').first().textContent());
    };
    await page.locator('details.chart-table summary').first().click();
    expect(await sendsOn(berlinDay)).toBe(1);
    expect(await sendsOn(utcDay)).toBe(0);
    await page.getByTestId('analytics-zone').selectOption('UTC');
    await expect.poll(() => sendsOn(utcDay)).toBe(1);
    expect(await sendsOn(berlinDay)).toBe(0);

    // One sequence's figures (the API's test counts a sequence's own; here another one has none of these).
    await applyDefinition(app.store, { clock: systemClock, random }, ws.id, validateDefinition({ key: 'other', name: 'Other', window: 'any', steps: [{ key: 'hello', type: 'email', subject: 'Hello', body: 'Hello' }] }));
    await page.reload();
    await page.getByTestId('analytics-zone').selectOption('UTC');
    await page.getByTestId('analytics-sequence').selectOption({ label: 'Other' });
    await expect.poll(() => page.getByTestId('kpi-sends').textContent()).toBe('0');
    expect(await page.getByTestId('analytics-csv').getAttribute('href')).toMatch(/sequenceId=/);
    await page.getByTestId('analytics-sequence').selectOption({ label: 'All sequences' });
    await expect.poll(() => page.getByTestId('kpi-sends').textContent()).toBe('3');

    // The CSV is the same days, in the chosen zone.
    const href = await page.getByTestId('analytics-csv').getAttribute('href');
    expect(href).toMatch(/zone=UTC/);
    const csv = await page.request.get(`${app.url}${href}`);
    expect(csv.status()).toBe(200);
    const lines = (await csv.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe('day,sends,opened,openedAutomatically,clicked,replies,positiveReplies,meetings,bounces,unsubscribes');
    expect(lines.find((l) => l.startsWith(utcDay))).toMatch(new RegExp(`^${utcDay},1,`));

    // The breakdown: per sequence by default, per step when asked, sortable, and its CSV the same rows.
    const breakdownCell = (row: string, col: number) => page.getByTestId('breakdown-table').locator('tbody tr', { has: page.locator(`th:text-is("${row}")`) }).locator('td').nth(col).textContent();
    await expect.poll(() => breakdownCell('Outbound', 0)).toBe('3');
    await page.getByTestId('breakdown-by').selectOption('step');
    await expect.poll(() => breakdownCell('Outbound / intro', 0)).toBe('3');
    // The reply and the meeting came with no email before them in this world: their own row.
    expect(await breakdownCell('Not credited to an email', 4)).toBe('1');
    const sends = page.getByTestId('breakdown-table').getByRole('columnheader', { name: 'Sends' });
    expect(await sends.getAttribute('aria-sort')).toBe('descending');
    await sends.getByRole('button').click();
    expect(await sends.getAttribute('aria-sort')).toBe('ascending');
    expect(await page.getByTestId('breakdown-table').locator('tbody th').first().textContent()).toBe('Not credited to an email');
    const bhref = await page.getByTestId('breakdown-csv').getAttribute('href');
    expect(bhref).toMatch(/breakdown\.csv\?by=step&/);
    const bcsv = (await (await page.request.get(`${app.url}${bhref}`)).text()).trimEnd().split('\r\n');
    expect(bcsv[0]).toMatch(/^step,id,sends,opened,/);
    expect(bcsv.find((l) => l.startsWith('Outbound / intro,'))).toMatch(/^Outbound \/ intro,[0-9a-f-]{36},3,/);

    // axe and a screenshot at a laptop's size and a phone's, every table behind a chart open; on the phone the page stays inside the screen's width.
    for (const summary of await page.locator('details.chart-table summary').all()) if (!(await summary.evaluate((s) => (s.parentElement as HTMLDetailsElement).open))) await summary.click();
    const found: string[] = [];
    for (const [width, height] of [[1440, 900], [390, 844]] as const) {
      await page.setViewportSize({ width, height });
      await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      found.push(...(await blockingViolations(page, `analytics ${width}`)));
      await screenshot(page, `analytics-${width}`);
    }
    expect(found).toEqual([]);
    expect(web.errors).toEqual([]);
  }, 120_000);
});

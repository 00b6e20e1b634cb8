import { sql } from 'kysely';
import type { Page } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import { runNightlyPurge } from '../../src/privacy/purge-role.ts';
import { retentionOf } from '../../src/privacy/retention.ts';
import { blockingViolations } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * Settings → Privacy in headless Chromium against the real app: an admin sets the retention (a
 * refused combination said in the form's words), the real purge runs and the card says what it
 * removed of this workspace; exports a person's data (the file saved is the API's JSON) and erases
 * them (a member's address refused in plain words; the confirmation says what happens), checked
 * through the API and the store; at 1440×900 and 390×844, with axe. Screenshots privacy-01..05.
 */
const skip = chromiumSkipReason();
const OWNER = { name: 'Priya Admin', email: 'priya@cadenza.test', password: 'a long enough password', workspace: 'Private Co' };
const ANN = 'ann@prospects.test';

/**
 * A call to the API from the signed-in page, as the app makes it (session cookie and CSRF token);
 * a string body goes as CSV (an import file), anything else as JSON.
 */
async function apiFromPage(page: Page, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const me = (await (await fetch('/api/auth/me')).json()) as { csrfToken: string; workspaces: { id: string }[] };
      const url = path.replace(':ws', me.workspaces[0]!.id);
      const type = typeof body === 'string' ? 'text/csv' : 'application/json';
      const r = await fetch(url, { method, headers: { 'content-type': type, 'x-csrf-token': me.csrfToken }, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
      return { status: r.status, json: await r.json().catch(() => null) };
    },
    { method, path, body },
  );
}

describe.skipIf(skip !== null)(`privacy in settings${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // The refused erasure (409) and retention (400) are logged by the browser all the same.
  const web = webSuite({ prefix: 'web-privacy', roles: ['api'], expectedConsole: /status of (401|409|400)/ });

  it('sets retention, shows the last purge, exports and erases a person; readable at 1440 px and 390 px', async () => {
    const page = await web.newPage({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    await web.setupOwner(page, OWNER);
    const db = web.app.store.db;
    const wsId = (await db.selectFrom('workspace').select('id').executeTakeFirstOrThrow()).id;
    // Ann is a lead; an import refused a second row of hers and a malformed one.
    expect((await apiFromPage(page, 'POST', '/api/workspaces/:ws/leads', { email: ANN, firstName: 'Ann' })).status).toBe(201);
    // An import job (its rejected rows are kept for the rejects report, so they are personal data too).
    const imp = await apiFromPage(page, 'POST', '/api/workspaces/:ws/leads/imports?fileName=few.csv', `email,first_name\nbob@prospects.test,Bob\n${ANN.toUpperCase()},Ann again\nnot an address,Nobody\n`);
    expect(imp.status, JSON.stringify(imp.json)).toBe(201);
    expect(await db.selectFrom('lead_import_reject').select('line').execute()).toHaveLength(2);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings', exact: true }).click();
    const card = page.getByRole('region', { name: 'Privacy' });
    await card.getByText('The nightly purge has not run yet.').waitFor();
    const kind = (name: string) => card.getByRole('group', { name });

    // Retention: everything kept until now; text longer than its messages is refused in the form's words.
    for (const k of ['Message text', 'Whole messages', 'Events', 'Rejected import rows', 'Calls with no lead']) {
      expect(await kind(k).getByRole('checkbox', { name: 'Keep until deleted' }).isChecked(), k).toBe(true);
      expect(await kind(k).getByLabel('Delete after (days)').isDisabled(), k).toBe(true);
    }
    await kind('Message text').getByRole('checkbox', { name: 'Keep until deleted' }).uncheck();
    await kind('Message text').getByLabel('Delete after (days)').fill('400');
    await kind('Whole messages').getByRole('checkbox', { name: 'Keep until deleted' }).uncheck();
    expect(await kind('Whole messages').getByLabel('Delete after (days)').inputValue()).toBe('365');
    await kind('Rejected import rows').getByRole('checkbox', { name: 'Keep until deleted' }).uncheck();
    await kind('Rejected import rows').getByLabel('Delete after (days)').fill('1');
    await kind('Calls with no lead').getByRole('checkbox', { name: 'Keep until deleted' }).uncheck();
    expect(await kind('Calls with no lead').getByLabel('Delete after (days)').inputValue()).toBe('90');
    await card.getByRole('button', { name: 'Save retention' }).click();
    await card.getByRole('alert').filter({ hasText: 'Message text: cannot be longer than whole messages (365)' }).waitFor();
    expect((await apiFromPage(page, 'GET', '/api/workspaces/:ws/privacy/retention')).json).toMatchObject({ messageBodiesDays: null, messagesDays: null });
    await kind('Message text').getByLabel('Delete after (days)').fill('90');
    await card.getByRole('button', { name: 'Save retention' }).click();
    await card.getByText('Retention saved.').waitFor();
    expect((await apiFromPage(page, 'GET', '/api/workspaces/:ws/privacy/retention')).json).toMatchObject({ messageBodiesDays: 90, messagesDays: 365, eventsDays: null, importRejectsDays: 1, unmatchedCallsDays: 90 });
    const stored = await db.selectFrom('workspace').select('settings').where('id', '=', wsId).executeTakeFirstOrThrow();
    // As the purge reads it from the store.
    expect(retentionOf(stored.settings as Record<string, unknown>)).toEqual({ messageBodiesDays: 90, messagesDays: 365, eventsDays: null, importRejectsDays: 1, unmatchedCallsDays: 90 });
    await card.locator('#privacy-retention').scrollIntoViewIfNeeded();
    await screenshot(page, 'privacy-01-retention-1440');
    const a11y = await blockingViolations(page, 'settings with privacy');

    // Export: the button says it is working and cannot be pressed twice; the file is the API's JSON.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/privacy/export', async (route) => {
      await held;
      await route.continue();
    });
    await card.getByLabel('Email address to export').fill(ANN);
    const download = page.waitForEvent('download');
    await card.getByRole('button', { name: 'Export data' }).click();
    const busy = card.getByRole('button', { name: 'Exporting…' });
    await busy.waitFor();
    expect(await busy.isDisabled()).toBe(true);
    release();
    const file = await download;
    expect(file.suggestedFilename()).toBe(`cadenza-export-${ANN}.json`);
    const saved = JSON.parse(readFileSync(await file.path(), 'utf8')) as { email: string; workspaceId: string; erased: boolean; sections: Record<string, unknown[]> };
    await page.unroute('**/privacy/export');
    expect(saved).toMatchObject({ email: ANN, workspaceId: wsId, erased: false });
    expect(saved.sections.leads).toHaveLength(1);
    expect(saved.sections.import_rejects).toHaveLength(1);
    const viaApi = (await apiFromPage(page, 'POST', '/api/workspaces/:ws/privacy/export', { email: ANN })).json as typeof saved;
    expect(Object.fromEntries(Object.entries(saved.sections).map(([k, v]) => [k, v.length]))).toEqual(Object.fromEntries(Object.entries(viaApi.sections).map(([k, v]) => [k, v.length])));
    await card.getByText(new RegExp(`Exported \\d+ records about ${ANN}: 1 lead, .*1 rejected import row`)).waitFor();
    await card.getByRole('button', { name: 'Download again' }).waitFor();
    await screenshot(page, 'privacy-02-exported-1440');

    // Erasure of a member's address: refused, said plainly, nothing erased.
    const eraseField = card.getByLabel('Email address to erase');
    await eraseField.fill(OWNER.email);
    await card.getByRole('button', { name: 'Erase…' }).click();
    const dialog = page.getByRole('dialog', { name: `Erase ${OWNER.email} for good?` });
    await dialog.getByRole('button', { name: 'Erase for good' }).click();
    await card.getByRole('alert').filter({ hasText: `Nothing was erased: ${OWNER.email} is a member of this workspace.` }).waitFor();
    await dialog.waitFor({ state: 'detached' });

    // Ann: the confirmation says what happens; Cancel erases nothing.
    await eraseField.fill(ANN);
    await card.getByRole('button', { name: 'Erase…' }).click();
    const confirm = page.getByRole('dialog', { name: `Erase ${ANN} for good?` });
    await confirm.getByText(/Only a keyed hash of it .* stays in the suppression list/).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await screenshot(page, 'privacy-03-erase-confirm-1440');
    a11y.push(...(await blockingViolations(page, 'the erasure confirmation')));
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await db.selectFrom('lead').select('id').where('email_norm', '=', ANN).execute()).toHaveLength(1);

    await card.getByRole('button', { name: 'Erase…' }).click();
    await confirm.getByRole('button', { name: 'Erase for good' }).click();
    const erased = card.getByText(`Erased ${ANN}: 0 enrollments stopped; deleted`);
    await erased.waitFor();
    expect(await erased.textContent()).toMatch(/deleted (1 lead, 1 rejected import row|1 rejected import row, 1 lead)\. A keyed hash of the address stays in the suppression list\./);
    await screenshot(page, 'privacy-04-erased-1440');
    // Through the store and the API: the address is gone, its keyed hash refuses it.
    expect(await db.selectFrom('lead').select('id').where('email_norm', '=', ANN).execute()).toEqual([]);
    const sup = await db.selectFrom('suppression').select(['email_norm', 'reason']).where('workspace_id', '=', wsId).execute();
    expect(sup).toEqual([{ email_norm: expect.stringMatching(/^erased:[0-9a-f]{64}$/), reason: 'erased' }]);
    expect((await apiFromPage(page, 'POST', '/api/workspaces/:ws/privacy/export', { email: ANN })).json).toMatchObject({ erased: true });
    expect((await apiFromPage(page, 'POST', '/api/workspaces/:ws/leads', { email: ANN })).json.error.code).toBe('SUPPRESSED');

    // The real purge, run as the scheduler runs it: the import is older than a day; the card says
    // what it removed of this workspace (Bob's invalid row is the one reject left after the erasure).
    // (created_at is never updated by the app: the schema types forbid it, hence plain SQL.)
    await sql`update lead_import set created_at = now() - interval '3 days' where workspace_id = ${wsId}::uuid`.execute(db);
    expect(await runNightlyPurge({ store: web.app.store, clock: systemClock, owner: 'privacy-test', atHourUtc: 0 })).toMatchObject({ report: { counts: { import_rejects: 1 } } });

    // On a phone: the same card in one column, nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await card.getByText(/Last purge: .*It removed 1 rejected import row\./).waitFor();
    expect(await kind('Rejected import rows').getByLabel('Delete after (days)').inputValue()).toBe('1');
    await card.getByLabel('Email address to export').fill('bob@prospects.test');
    await card.getByRole('button', { name: 'Export data' }).click();
    await card.getByText(/Exported \d+ records? about bob@prospects\.test: 1 lead/).waitFor();
    await card.locator('#privacy-retention').scrollIntoViewIfNeeded();
    await screenshot(page, 'privacy-05-390');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390 + 1);
    const box = await card.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390 + 1);
    a11y.push(...(await blockingViolations(page, 'privacy on a phone')));
    expect(a11y, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
  }, 180_000);
});

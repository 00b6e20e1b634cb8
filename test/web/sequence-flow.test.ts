import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { loadDefinition } from '../../src/sequence/definition-document.ts';
import { auditViewports } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * Issue 18: the sequence editor as a flow, with the YAML form kept in sync. In headless Chromium
 * against the real app: three steps built in the flow, a delay changed on its connector, seen in
 * the YAML view (the server's rendering, as `cadenza sequence export` writes it), a subject changed
 * in the YAML, seen back in the flow, saved and reloaded. A YAML that does not parse lists its
 * problems with their line. And a branch built in the flow: its two arms side by side at 1440 px, one
 * that ends, saved and reloaded as the stored definition says. Screenshots and axe at 1440×900 and
 * 390×844.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'flo@cadenza.test', password: 'a long enough password', workspace: 'Flow Co' };

describe.skipIf(skip !== null)(`the sequence flow editor in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // A YAML that does not parse is a 400 the page shows, not an error.
  const web = webSuite({ prefix: 'web-seq-flow', roles: ['api'], expectedConsole: /status of (401|400)/ });

  const audit = (page: Page, moment: string, found: string[]) => auditViewports(page, moment, found, screenshot);

  it('builds three steps in the flow, edits a delay on its connector, round-trips through the YAML view, saves and reloads', async () => {
    const { app } = web;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await web.setupOwner(page, OWNER);
    const found: string[] = [];

    await page.goto(`${app.url}/sequences/new`);
    await page.getByLabel('Sequence name').fill('Flow test');
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByLabel('Step 3 subject').waitFor();
    expect(await page.getByText('Starts at enrollment').count()).toBe(1);

    // The wait on the connector above step 2 is its delay, edited in place.
    await page.getByRole('button', { name: /^Wait 3 business days before step 2/ }).click();
    await page.getByLabel('Delay before step 2').fill('5 days');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: /^Wait 5 days before step 2/ }).waitFor();
    expect(await page.getByLabel('Step 2 delay').inputValue()).toBe('5 days');
    // A step inserted from a connector: a call task before step 3, then removed again.
    await page.getByRole('button', { name: 'Insert a step before step 3' }).click();
    await page.getByRole('group', { name: 'Insert before step 3' }).getByRole('button', { name: 'Call task' }).click();
    expect(await page.getByLabel('Step 3 type').inputValue()).toBe('call');
    expect(await page.getByLabel('Step 4 type').inputValue()).toBe('email');
    await page.getByRole('button', { name: 'Remove step 3' }).click();
    expect(await page.getByLabel('Step 3 type').inputValue()).toBe('email');
    await page.getByLabel('Step 4 type').waitFor({ state: 'detached' });
    await audit(page, 'sequence-flow-01-flow', found);

    // The YAML view: the server's rendering, with the new delay.
    await page.getByRole('tab', { name: 'YAML' }).click();
    const text = page.getByLabel('Sequence definition (YAML)');
    await expect.poll(() => text.inputValue()).toContain('delay: 5 days');
    const yaml = await text.inputValue();
    expect(yaml).toMatch(/^key: flow-test\nname: Flow test\n/);
    expect(yaml).toContain('key: step-3');
    await audit(page, 'sequence-flow-02-yaml', found);

    // A YAML that does not parse: its problems, with the line, and the view stays.
    await text.fill(`${yaml}steps: [\n`);
    await page.getByRole('button', { name: 'Apply YAML' }).click();
    const problems = page.getByRole('list', { name: 'YAML problems' });
    await problems.getByText(/^line \d+, column \d+: /).first().waitFor();
    await page.getByRole('tab', { name: 'Flow' }).click();
    expect(await page.getByRole('tab', { name: 'YAML' }).getAttribute('aria-selected')).toBe('true');
    await audit(page, 'sequence-flow-03-yaml-problems', found);

    // A subject changed in the YAML is the flow's once the view switches back.
    const edited = yaml.replace(/^(\s+)subject: .*Quick question.*$/m, '$1subject: Changed in YAML');
    expect(edited).not.toBe(yaml);
    await text.fill(edited);
    await page.getByRole('tab', { name: 'Flow' }).click();
    await expect.poll(() => page.getByLabel('Step 1 subject').inputValue()).toBe('Changed in YAML');
    expect(await page.getByLabel('Step 2 delay').inputValue()).toBe('5 days');

    await page.getByRole('button', { name: 'Save sequence' }).click();
    await page.getByText('Sequence created.').waitFor();
    await page.waitForURL(/\/sequences\/[0-9a-f-]{36}$/);
    const sequenceId = page.url().split('/').pop()!;

    await page.reload();
    await expect.poll(() => page.getByLabel('Step 1 subject').inputValue()).toBe('Changed in YAML');
    await page.getByRole('button', { name: /^Wait 5 days before step 2/ }).waitFor();
    const ws = await app.store.db.selectFrom('workspace').select('id').where('name', '=', OWNER.workspace).executeTakeFirstOrThrow();
    const def = (await loadDefinition(app.store.db, ws.id, sequenceId))!;
    expect(def.steps.map((s) => [s.key, s.delay])).toEqual([
      ['step-1', { amount: 0, unit: 'minutes' }],
      ['step-2', { amount: 5, unit: 'days' }],
      ['step-3', { amount: 3, unit: 'business_days' }],
    ]);
    expect(def.steps[0]!.variants[0]!.subject).toBe('Changed in YAML');

    // Saved from the YAML view: the text as edited there.
    await page.getByRole('tab', { name: 'YAML' }).click();
    await expect.poll(() => text.inputValue()).toContain('Changed in YAML');
    await text.fill((await text.inputValue()).replace('name: Flow test', 'name: Flow test, from YAML'));
    await page.getByRole('button', { name: 'Save sequence' }).click();
    await page.getByText('Sequence saved').waitFor();
    await expect.poll(async () => (await loadDefinition(app.store.db, ws.id, sequenceId))!.name).toBe('Flow test, from YAML');

    expect(found).toEqual([]);
    expect(web.errors).toEqual([]);
  });

  it('builds a branch in the flow: its arms side by side, one that ends, saved and reloaded as the definition says', async () => {
    const { app } = web;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(app.url!);
    await web.signIn(page, OWNER);
    await page.goto(`${app.url}/sequences/new`);
    await page.getByLabel('Sequence name').fill('Branch test');
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByLabel('Step 2 subject').waitFor();
    // A branch inserted before step 2: "opened step 1?" with a step of its own, and the default arm.
    await page.getByRole('button', { name: 'Insert a step before step 2' }).click();
    await page.getByRole('group', { name: 'Insert before step 2' }).getByRole('button', { name: 'Branch' }).click();
    const arms = page.getByRole('list', { name: 'Step 2 arms' });
    await arms.waitFor();
    expect(await arms.getByRole('listitem', { name: /^Step 2 arm \d$/ }).count()).toBe(2);
    await page.getByLabel('Step 2 arm 2 then').selectOption('end');
    await page.getByText('No arm rejoins').waitFor({ state: 'detached' });
    const found: string[] = [];
    await audit(page, 'sequence-flow-04-branch', found);

    await page.getByRole('button', { name: 'Save sequence' }).click();
    await page.getByText('Sequence created.').waitFor();
    await page.waitForURL(/\/sequences\/[0-9a-f-]{36}$/);
    const sequenceId = page.url().split('/').pop()!;
    await page.reload();
    await arms.waitFor();
    // Side by side at 1440 px: the second arm to the right of the first, on the same line.
    const [a1, a2] = [await page.getByRole('listitem', { name: 'Step 2 arm 1', exact: true }).boundingBox(), await page.getByRole('listitem', { name: 'Step 2 arm 2', exact: true }).boundingBox()];
    expect(a2!.x).toBeGreaterThan(a1!.x + a1!.width - 1);
    expect(Math.abs(a2!.y - a1!.y)).toBeLessThan(5);
    expect(await page.getByLabel('Step 2 arm 2 then').inputValue()).toBe('end');

    const ws = await app.store.db.selectFrom('workspace').select('id').where('name', '=', OWNER.workspace).executeTakeFirstOrThrow();
    const def = (await loadDefinition(app.store.db, ws.id, sequenceId))!;
    const branch = def.steps.find((s) => s.kind === 'branch')!;
    expect(branch.branches!.map((b) => [b.key, b.when ?? null, b.then, b.steps.length])).toEqual([
      ['yes', { opened: 'step-1' }, 'continue', 1],
      ['otherwise', null, 'end', 0],
    ]);
    expect(found).toEqual([]);
    expect(web.errors).toEqual([]);
  });
});

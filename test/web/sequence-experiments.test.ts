import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { loadDefinition } from '../../src/sequence/definition-document.ts';
import { auditViewports } from './axe.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';

/**
 * Issue 18: experiments built in the flow editor, in headless Chromium against the real app. An
 * email step's A/B test with its settings (reply window, outcome, alpha, automatic winner), and a
 * sequence experiment over two steps (the variant of one, the delay and send hours of another),
 * with an arm added and removed. A refused save shows the server's problem next to its field (a
 * body validation: alpha out of range; a definition check: send hours outside the window). Saved,
 * reloaded, checked in the stored definition, through the API and in the YAML view; edited in the
 * YAML and seen in the flow, and back; removed, and an experiment on the order of two steps added.
 * Screenshots and axe at 1440×900 and 390×844.
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'exa@cadenza.test', password: 'a long enough password', workspace: 'Experiment Co' };

describe.skipIf(skip !== null)(`experiments in the sequence flow editor in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  // A refused save is a 400 the page shows next to the field, not an error.
  const web = webSuite({ prefix: 'web-seq-experiments', roles: ['api'], expectedConsole: /status of (401|400)/ });

  const audit = (page: Page, moment: string, found: string[]) => auditViewports(page, moment, found, screenshot);
  /** The server's problem shown with a field: its aria-describedby text, and the field marked invalid. */
  const fieldProblem = async (page: Page, label: string) => {
    const field = page.getByLabel(label, { exact: true });
    if ((await field.getAttribute('aria-invalid')) !== 'true') return null;
    const ids = (await field.getAttribute('aria-describedby'))!.split(' ');
    return page.locator(`[id="${ids.at(-1)}"]`).textContent();
  };

  it('builds a step A/B test with settings and a sequence experiment over two steps; problems by their field; saved, reloaded, in the API and the YAML, edited both ways', async () => {
    const { app } = web;
    const page = await web.newPage({ viewport: { width: 1440, height: 900 } });
    await web.setupOwner(page, OWNER);
    const found: string[] = [];

    await page.goto(`${app.url}/sequences/new`);
    await page.getByLabel('Sequence name').fill('Experiment flow');
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByLabel('Step 3 subject').waitFor();

    // Step 1: an A/B test. Its settings appear once it has a second variant.
    expect(await page.getByRole('group', { name: 'Step 1 A/B test' }).count()).toBe(0);
    await page.getByRole('listitem', { name: 'Step 1' }).getByRole('button', { name: 'Add a variant (A/B test)' }).click();
    await page.getByLabel('Step 1 variant B subject').fill('Another subject, {{first_name | default: "there"}}');
    await page.getByLabel('Step 1 A/B test reply window (days)').fill('7');
    await page.getByLabel('Step 1 A/B test outcome').selectOption('positive');
    await page.getByLabel('Step 1 A/B test alpha').fill('0.5');
    await page.getByLabel('Step 1 A/B test: automatic winner', { exact: false }).check();
    // Step 2: variants the sequence experiment will choose.
    await page.getByRole('listitem', { name: 'Step 2' }).getByRole('button', { name: 'Add a variant (A/B test)' }).click();
    await page.getByLabel('Step 2 variant B body').fill('Hi {{first_name | default: "there"}}, a shorter follow-up.');

    // A sequence experiment: it starts on the A/B step that has no settings of its own (step-2), its arms on A and B.
    await page.getByRole('button', { name: 'Add a sequence experiment' }).click();
    const x = page.getByRole('region', { name: 'Experiment 1' });
    await x.waitFor();
    expect(await page.getByLabel('Experiment 1 arm 1 step-2 variant').inputValue()).toBe('a');
    expect(await page.getByLabel('Experiment 1 arm 2 step-2 variant').inputValue()).toBe('b');
    // step-2's own A/B settings give way to the experiment's.
    await page.getByRole('group', { name: 'Step 2 A/B test' }).getByText('arms of the sequence experiment "experiment-1"').waitFor();
    await page.getByLabel('Experiment 1 key', { exact: true }).fill('tone-timing');
    // A second step: step-3's delay, then its send hours too.
    await page.getByLabel('Experiment 1: add a step').selectOption('step-3');
    expect(await page.getByLabel('Experiment 1 arm 2 step-3 delay').inputValue()).toBe('3 business days');
    await page.getByRole('group', { name: 'Experiment 1 step step-3' }).getByLabel('send hours').check();
    await page.getByLabel('Experiment 1 arm 2 step-3 delay').fill('5 business days');
    await page.getByLabel('Experiment 1 arm 1 step-3 send hours').fill('07:00-09:00');
    await page.getByLabel('Experiment 1 arm 2 step-3 send hours').fill('14:00-16:00');
    await page.getByLabel('Experiment 1 arm 2 weight').fill('2');
    await page.getByLabel('Experiment 1: automatic winner', { exact: false }).check();
    // An arm added (its choices filled in) and removed again.
    await page.getByRole('button', { name: 'Add an arm to experiment 1' }).click();
    expect(await page.getByLabel('Experiment 1 arm 3 key').inputValue()).toBe('arm-1');
    expect(await page.getByLabel('Experiment 1 arm 3 step-2 variant').inputValue()).toBe('a');
    await page.getByRole('button', { name: 'Remove experiment 1 arm 3' }).click();
    await page.getByLabel('Experiment 1 arm 3 key').waitFor({ state: 'detached' });
    await audit(page, 'sequence-experiments-01-built', found);

    // Refused by the body's validation: alpha, next to its field, in plain words.
    await page.getByRole('button', { name: 'Save sequence' }).click();
    await expect.poll(() => fieldProblem(page, 'Step 1 A/B test alpha')).toMatch(/^alpha \(the false positive rate\) is between 0\.001 and 0\.2/);
    expect(await fieldProblem(page, 'Step 1 A/B test reply window (days)')).toBeNull();
    await audit(page, 'sequence-experiments-02-alpha-refused', found);
    await page.getByLabel('Step 1 A/B test alpha').fill('0.1');
    // Refused by the definition's checks: an arm's send hours outside the sequence's window.
    await page.getByRole('button', { name: 'Save sequence' }).click();
    await expect.poll(() => fieldProblem(page, 'Experiment 1 arm 1 step-3 send hours')).toMatch(/07:00-09:00 is outside the sequence's window 09:00-17:00/);
    expect(await fieldProblem(page, 'Step 1 A/B test alpha')).toBeNull();
    await page.getByLabel('Experiment 1 arm 1 step-3 send hours').fill('09:00-11:00');
    await page.getByRole('button', { name: 'Save sequence' }).click();
    await page.getByText('Sequence created.').waitFor();
    await page.waitForURL(/\/sequences\/[0-9a-f-]{36}$/);
    const sequenceId = page.url().split('/').pop()!;
    expect(await fieldProblem(page, 'Experiment 1 arm 1 step-3 send hours')).toBeNull();

    // Reloaded: the flow shows what was saved.
    await page.reload();
    await expect.poll(() => page.getByLabel('Step 1 A/B test alpha').inputValue()).toBe('0.1');
    expect(await page.getByLabel('Step 1 A/B test reply window (days)').inputValue()).toBe('7');
    expect(await page.getByLabel('Step 1 A/B test outcome').inputValue()).toBe('positive');
    expect(await page.getByLabel('Step 1 A/B test: automatic winner', { exact: false }).isChecked()).toBe(true);
    expect(await page.getByLabel('Experiment 1 key', { exact: true }).inputValue()).toBe('tone-timing');
    expect(await page.getByLabel('Experiment 1 arm 2 step-3 delay').inputValue()).toBe('5 business days');
    expect(await page.getByLabel('Experiment 1: automatic winner', { exact: false }).isChecked()).toBe(true);

    // The stored definition, and the API's answer.
    const ws = await app.store.db.selectFrom('workspace').select('id').where('name', '=', OWNER.workspace).executeTakeFirstOrThrow();
    const def = (await loadDefinition(app.store.db, ws.id, sequenceId))!;
    expect(def.steps[0]!.config.experiment).toEqual({ replyWindowDays: 7, outcome: 'positive', alpha: 0.1, autoWinner: true });
    expect(def.steps[0]!.variants.map((v) => v.key)).toEqual(['a', 'b']);
    expect(def.steps[1]!.config.experiment).toBeUndefined();
    const bd = (amount: number) => ({ amount, unit: 'business_days' });
    expect(def.experiments).toEqual([
      {
        key: 'tone-timing',
        settings: { autoWinner: true },
        arms: [
          { key: 'a', weight: 1, steps: { 'step-2': { variant: 'a' }, 'step-3': { delay: bd(3), sendHours: '09:00-11:00' } } },
          { key: 'b', weight: 2, steps: { 'step-2': { variant: 'b' }, 'step-3': { delay: bd(5), sendHours: '14:00-16:00' } } },
        ],
      },
    ]);
    const got = await page.request.get(`${app.url}/api/workspaces/${ws.id}/sequences/${sequenceId}`);
    expect(got.status()).toBe(200);
    const body = (await got.json()) as { steps: Array<{ experiment?: unknown }>; experiments: unknown };
    expect(body.steps[0]!.experiment).toEqual({ replyWindowDays: 7, outcome: 'positive', alpha: 0.1, autoWinner: true });
    expect(body.experiments).toEqual([
      {
        key: 'tone-timing',
        autoWinner: true,
        arms: [
          { key: 'a', weight: 1, steps: [{ step: 'step-2', variant: 'a' }, { step: 'step-3', delay: '3 business days', sendHours: '09:00-11:00' }] },
          { key: 'b', weight: 2, steps: [{ step: 'step-2', variant: 'b' }, { step: 'step-3', delay: '5 business days', sendHours: '14:00-16:00' }] },
        ],
      },
    ]);

    // The YAML view: both experiments as `cadenza sequence export` writes them.
    await page.getByRole('tab', { name: 'YAML' }).click();
    const text = page.getByLabel('Sequence definition (YAML)');
    await expect.poll(() => text.inputValue()).toContain('key: tone-timing');
    const yaml = await text.inputValue();
    expect(yaml).toMatch(/experiment:\n\s+reply_window_days: 7\n\s+outcome: positive\n\s+alpha: 0.1\n\s+auto_winner: true\n/);
    expect(yaml).toMatch(/experiments:\n\s+- key: tone-timing\n\s+auto_winner: true\n\s+arms:\n/);
    expect(yaml).toMatch(/step-3:\n\s+delay: 5 business days\n\s+send_hours: "?14:00-16:00"?\n/);
    await audit(page, 'sequence-experiments-03-yaml', found);

    // Edited in the YAML (the second arm's weight and delay), seen in the flow.
    const edited = yaml.replace(/weight: 2\n/, 'weight: 3\n').replace('delay: 5 business days', 'delay: 4 business days');
    expect(edited).not.toBe(yaml);
    await text.fill(edited);
    await page.getByRole('tab', { name: 'Flow' }).click();
    await expect.poll(() => page.getByLabel('Experiment 1 arm 2 weight').inputValue()).toBe('3');
    expect(await page.getByLabel('Experiment 1 arm 2 step-3 delay').inputValue()).toBe('4 business days');
    // And back: the experiment's reply window set in the flow is the YAML's.
    await page.getByLabel('Experiment 1 reply window (days)').fill('10');
    await page.getByRole('tab', { name: 'YAML' }).click();
    await expect.poll(() => text.inputValue()).toMatch(/- key: tone-timing\n\s+reply_window_days: 10\n\s+auto_winner: true\n/);
    await page.getByRole('button', { name: 'Save sequence' }).click();
    await page.getByText('Sequence saved').waitFor();
    const saved = (await loadDefinition(app.store.db, ws.id, sequenceId))!.experiments![0]!;
    expect(saved.settings).toEqual({ replyWindowDays: 10, autoWinner: true });
    expect(saved.arms[1]).toEqual({ key: 'b', weight: 3, steps: { 'step-2': { variant: 'b' }, 'step-3': { delay: bd(4), sendHours: '14:00-16:00' } } });

    // Removed in the flow: the sequence runs as written again.
    await page.getByRole('tab', { name: 'Flow' }).click();
    await page.getByRole('button', { name: 'Remove experiment 1', exact: true }).click();
    await x.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Save sequence' }).click();
    await expect.poll(async () => (await loadDefinition(app.store.db, ws.id, sequenceId))!.experiments ?? []).toEqual([]);

    // An order experiment: the second arm runs step-3 before step-2 (its first pick, step-2's variant, taken out).
    await page.getByRole('button', { name: 'Add a sequence experiment' }).click();
    await page.getByRole('button', { name: 'Remove step-2 from experiment 1' }).click();
    await x.getByText('No step yet').waitFor();
    await page.getByLabel('Experiment 1 key', { exact: true }).fill('order');
    await page.getByLabel('Experiment 1 arm 2 step order').fill('step-3, step-2');
    await page.getByRole('button', { name: 'Save sequence' }).click();
    await expect.poll(async () => (await loadDefinition(app.store.db, ws.id, sequenceId))!.experiments ?? []).toEqual([
      { key: 'order', settings: {}, arms: [{ key: 'a', weight: 1, steps: {} }, { key: 'b', weight: 1, steps: {}, order: ['step-3', 'step-2'] }] },
    ]);
    await page.getByRole('tab', { name: 'YAML' }).click();
    await expect.poll(() => text.inputValue()).toMatch(/- key: b\n\s+weight: 1\n(\s+steps: \{\}\n)?\s+order:\n\s+- step-3\n\s+- step-2\n/);
    await page.getByRole('tab', { name: 'Flow' }).click();
    expect(await page.getByLabel('Experiment 1 arm 2 step order').inputValue()).toBe('step-3, step-2');
    await audit(page, 'sequence-experiments-04-order', found);

    expect(found).toEqual([]);
    expect(web.errors).toEqual([]);
  });
});

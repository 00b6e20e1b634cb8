import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import { seededRandom } from '../../src/common/random.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { chromiumSkipReason } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * The sequence editor's "Check content" panel, before launch, in headless Chromium against the
 * real app: a spammy step is checked, and the panel shows Cadenza's findings and the spam
 * filter's state (no rspamd on this app's address: "not installed", said in words). axe and
 * screenshots of the findings at 1440×900 and 390×844 (content-check-01-findings-*).
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'sam@cadenza.test', password: 'a long enough password', workspace: 'Acme' };

describe.skipIf(skip !== null)(`content check in the sequence editor${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-content-check', roles: ['api'] });

  it('checks a step before launch and lists what is wrong with it', async () => {
    const { app } = web;
    const page = await web.newPage({ viewport: { width: 1280, height: 1000 } });
    await web.setupOwner(page, OWNER);
    const ws = await app.store.db.selectFrom('workspace').select('id').where('name', '=', 'Acme').executeTakeFirstOrThrow();
    const def = validateDefinition({
      key: 'loud',
      name: 'Loud',
      window: 'Mon-Fri 08:00-18:00',
      steps: [
        { key: 'intro', type: 'email', subject: 'Hello {{first_name | default: "there"}}', body: 'Hi, a short question about your team.' },
        { key: 'shout', type: 'email', delay: '2 days', subject: 'ACT NOW: FREE MONEY', body: 'CLICK HERE http://203.0.113.7/win, guaranteed winner, limited time!' },
      ],
    });
    const { sequenceId } = await applyDefinition(app.store, { clock: systemClock, random: seededRandom('web-content-check') }, ws.id, def);

    await page.goto(`${app.url}/sequences/${sequenceId}`);
    const panel = page.getByRole('region', { name: 'Check content' });
    await panel.getByLabel('Step').selectOption('shout');
    await panel.getByRole('button', { name: 'Check content' }).click();
    const checks = panel.getByRole('list', { name: "Cadenza's checks" });
    await expect.poll(() => checks.textContent(), { timeout: 15_000 }).toMatch(/subject is in capitals/);
    const text = (await panel.textContent()) ?? '';
    expect(text).toMatch(/spam phrases: .*"act now"/);
    expect(text).toMatch(/bare IP address/);
    expect(text).toMatch(/No spam score: no spam scorer at .* \(rspamd not installed or not running\)/);
    const found: string[] = [];
    await atBothWidths(page, 'content-check', '01-findings', found);
    expect(found, 'serious or critical axe violations').toEqual([]);
    expect(web.errors).toEqual([]);
  }, 120_000);
});

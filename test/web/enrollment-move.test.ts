import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/common/clock.ts';
import { newId } from '../../src/common/ids.ts';
import { seededRandom } from '../../src/common/random.ts';
import { applyDefinition } from '../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../src/sequence/definition.ts';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * Moving enrollments as a rep does it, in headless Chromium against the real app: from a lead's
 * page (Move to sequence…, pick, confirm; the lead shows 'moved' and the timeline says from where
 * to where), and in bulk from a sequence's enrollment list. The pickers and the list after the move
 * are audited by axe and photographed at 1440×900 and 390×844 (test-results/screens/move-*).
 */
const skip = chromiumSkipReason();
const OWNER = { email: 'mona@cadenza.test', password: 'a long enough password', workspace: 'Acme' };

describe.skipIf(skip !== null)(`moving enrollments in Chromium${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'web-move', roles: ['api'] });
  /** Serious or critical axe violations (WCAG A/AA) at the moments audited. */
  const a11y: string[] = [];

  /** Two sequences sending from one mailbox, and three leads in the first. */
  async function seed(workspaceId: string): Promise<{ s1: string; leads: Array<{ id: string; email: string }> }> {
    const { app } = web;
    const random = seededRandom('web-move');
    const deps = { clock: systemClock, random };
    const db = app.store.db;
    await db.insertInto('mailbox').values({ id: newId(Date.now(), random), workspace_id: workspaceId, user_id: null, email: 'rep@acme.test', provider: 'smtp_imap' }).execute();
    const def = (key: string, name: string) =>
      validateDefinition({
        key, name, window: 'any', holidays: false, mailboxes: ['rep@acme.test'],
        steps: [
          { key: 'intro', type: 'email', delay: '1 days', subject: 'Hello', body: 'Hi {{first_name}}' },
          { key: 'call', type: 'call', delay: '2 days', title: 'Call' },
        ],
      });
    const s1 = (await applyDefinition(app.store, deps, workspaceId, def('first-touch', 'First touch'))).sequenceId;
    await applyDefinition(app.store, deps, workspaceId, def('nurture', 'Nurture'));
    const leads = ['ann', 'bob', 'cat'].map((n) => ({ id: newId(Date.now(), random), email: `${n}@prospect.test` }));
    for (const l of leads) await db.insertInto('lead').values({ id: l.id, workspace_id: workspaceId, email: l.email, email_norm: l.email, first_name: l.email.slice(0, 3) }).execute();
    await bulkEnroll(app.store, deps, { workspaceId, sequenceId: s1, leadIds: leads.map((l) => l.id) });
    return { s1, leads };
  }

  it("moves one lead from its page, then two from the sequence's list", async () => {
    const { app, errors } = web;
    const page = await web.newPage({ viewport: { width: 1280, height: 900 } });
    await web.setupOwner(page, OWNER);
    const ws = await app.store.db.selectFrom('workspace').select('id').where('name', '=', 'Acme').executeTakeFirstOrThrow();
    const { s1, leads } = await seed(ws.id);

    // One lead, from its page.
    await page.goto(`${app.url}/leads/${leads[0]!.id}`);
    const side = page.getByRole('complementary', { name: 'Lead' });
    await side.getByText('First touch:').waitFor();
    await side.getByRole('button', { name: 'Move to sequence…' }).click();
    await side.getByLabel('Move to sequence').selectOption({ label: 'Nurture' });
    await expect.poll(() => side.getByLabel('Start at step').locator('option').count()).toBe(2);
    await side.getByLabel('Start at step').selectOption({ label: 'Step 2 (call)' });
    await atBothWidths(page, 'move', '01-lead-pick', a11y);
    await side.getByRole('button', { name: 'Confirm move' }).click();
    await side.getByText('moved to Nurture').waitFor();
    await side.getByText('Nurture:').waitFor();
    await page.getByRole('region', { name: 'Timeline' }).getByText('moved from First touch to Nurture').first().waitFor();
    await screenshot(page, 'move-02-lead-moved');
    const moved = await app.store.db.selectFrom('enrollment as e').innerJoin('step as s', 's.id', 'e.next_step_id').select(['e.state', 's.key']).where('e.lead_id', '=', leads[0]!.id).where('e.state', '=', 'active').execute();
    expect(moved).toEqual([{ state: 'active', key: 'call' }]);

    // Two more, in bulk, from the first sequence's enrollment list.
    await page.goto(`${app.url}/sequences/${s1}`);
    const list = page.getByRole('region', { name: 'Enrollments' });
    await list.getByText(leads[1]!.email).waitFor();
    await list.getByLabel(`Select ${leads[1]!.email}`).check();
    await list.getByLabel(`Select ${leads[2]!.email}`).check();
    await list.getByRole('button', { name: 'Move selected to sequence…' }).click();
    await list.getByLabel('Move to sequence').selectOption({ label: 'Nurture' });
    await atBothWidths(page, 'move', '03-bulk-pick', a11y);
    await list.getByRole('button', { name: 'Confirm move of 2' }).click();
    await list.getByText('2 moved.').waitFor();
    await list.getByText('No enrollment in state active.').waitFor();
    await atBothWidths(page, 'move', '04-bulk-moved', a11y);
    const states = await app.store.db.selectFrom('enrollment').select('state').where('sequence_id', '=', s1).execute();
    expect(states.map((s) => s.state).sort()).toEqual(['moved', 'moved', 'moved']);
    expect(a11y, 'serious or critical axe violations').toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});

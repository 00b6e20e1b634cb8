import { describe, expect, it } from 'vitest';
import { chromiumSkipReason, screenshot } from './chromium.ts';
import { webSuite } from './harness.ts';
import { atBothWidths } from './viewports.ts';

/**
 * The warmup panel of the Mailboxes screen in headless Chromium against the real app: the owner
 * opens a mailbox's Warmup panel, opts it in, and reads its placement (7 and 30 days) and the
 * 30-day chart of warmup mail in the inbox and in junk; then, placement having halved its cap, the
 * list shows the cap in force and why. The panel is audited by axe and photographed at 1440×900 and
 * 390×844 (warmup-01-panel-1440, -390); warmup-02-halved-cap.
 */
const skip = chromiumSkipReason();
const DAY = 86_400_000;

describe.skipIf(skip !== null)(`warmup panel${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const web = webSuite({ prefix: 'warmup', roles: ['api'] });
  const OWNER = { email: 'wren@cadenza.test', password: 'a long enough password' };

  it('opts a mailbox in and shows its placement with a chart', async () => {
    const page = await web.newPage({ viewport: { width: 1440, height: 1000 } });
    await web.setupOwner(page, { name: 'Wren', ...OWNER, workspace: 'Warm Co' });
    const db = web.app.store.db;
    const ws = await db.selectFrom('workspace').select('id').where('name', '=', 'Warm Co').executeTakeFirstOrThrow();
    const mailboxId = '00000000-0000-4000-8000-00000000a4a4';
    await db.insertInto('mailbox').values({ id: mailboxId, workspace_id: ws.id, email: 'wren@acme.test', provider: 'gmail' }).execute();
    // Receipts of its warmup mail: 9 in the inbox and 1 in junk in the last 7 days.
    const now = Date.now();
    await db
      .insertInto('warmup_mail')
      .values(
        Array.from({ length: 10 }, (_, i) => ({
          id: `00000000-0000-4000-8000-0000000a40${String(i).padStart(2, '0')}`,
          pool: 'default',
          kind: 'first' as const,
          message_id: `<w${i}@acme.test>`,
          sender_mailbox_id: mailboxId,
          sender_address: 'wren@acme.test',
          receiver_address: `peer${i}@peer.test`,
          planned_at: new Date(now - (i % 5) * DAY - 3_600_000),
          received_at: new Date(now - (i % 5) * DAY - 3_000_000),
          received_folder: i === 0 ? ('junk' as const) : ('inbox' as const),
        })),
      )
      .execute();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Mailboxes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Mailboxes' }).waitFor();
    await page.getByRole('button', { name: 'Warmup of wren@acme.test' }).click();
    const panel = page.getByRole('region', { name: 'Warmup of wren@acme.test' });
    const toggle = panel.getByRole('checkbox', { name: 'Take part in the warmup network' });
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(false);
    await toggle.check();
    await panel.getByRole('button', { name: 'Save target' }).waitFor();
    expect(await db.selectFrom('warmup_member').select(['mailbox_id', 'target']).execute()).toEqual([{ mailbox_id: mailboxId, target: 30 }]);
    await panel.getByText('90%').first().waitFor();
    expect(await panel.textContent()).toMatch(/In the inbox: 90% over 7 days \(10 read\), 90% over 30 days \(10 read\)/);
    expect(await panel.getByRole('img', { name: /Warmup mail in the inbox/ }).count()).toBe(1);
    const found: string[] = [];
    await atBothWidths(page, 'warmup', '01-panel', found);
    expect(found, 'serious or critical axe violations').toEqual([]);

    // Placement halved its cap: the list shows the cap in force and why (screenshot warmup-02-halved-cap).
    const reason = 'warmup placement: 62% of 40 warmup mails in the inbox over 7 days, below 80%: daily cap × 0.5';
    await db.updateTable('warmup_member').set({ cap_factor: 0.5, cap_reason: reason }).where('mailbox_id', '=', mailboxId).execute();
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Mailboxes' }).waitFor();
    const row = page.getByRole('row', { name: /wren@acme\.test/ });
    await row.getByText('15/day (halved:').waitFor();
    expect(await row.textContent()).toContain(`15/day (halved: ${reason})`);
    await screenshot(page, 'warmup-02-halved-cap');
    expect(web.errors).toEqual([]);
  }, 120_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerAndRep, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('warmup opt-in and placement (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let rep: Browser;
  let ownersMailbox: ObjectIds;
  let repsMailbox: ObjectIds;

  beforeAll(async () => {
    ({ h, ws, owner, rep, ownersMailbox, repsMailbox } = await ownerAndRep(backend));
  }, 60_000);
  afterAll(async () => h?.close());

  it('a member opts their own mailbox in and out, not a colleague’s; placement starts empty', async () => {
    const own = `/api/workspaces/${ws}/mailboxes/${repsMailbox.mailboxId}/warmup`;
    expect((await rep.call('GET', own)).json()).toMatchObject({ enabled: false, target: null, capFactor: 1 });
    const on = await rep.call('PUT', own, { enabled: true, target: 25 });
    expect(on.statusCode).toBe(200);
    expect(on.json()).toMatchObject({ enabled: true, target: 25, pool: 'default', capReason: null });
    const placement = (await rep.call('GET', `${own}/placement`)).json();
    expect(placement).toMatchObject({ share7: null, share30: null, receipts7: 0, receipts30: 0, capFactor: 1, capReason: null });
    expect(placement.days).toHaveLength(30);
    expect((await rep.call('PUT', own, { enabled: true, target: 0 })).statusCode).toBe(400);
    expect((await rep.call('PUT', `/api/workspaces/${ws}/mailboxes/${ownersMailbox.mailboxId}/warmup`, { enabled: true })).statusCode).toBe(403);
    expect((await owner.call('PUT', `/api/workspaces/${ws}/mailboxes/${ownersMailbox.mailboxId}/warmup`, { enabled: true })).json()).toMatchObject({ enabled: true, target: 30 });
    expect((await rep.call('PUT', own, { enabled: false })).json()).toMatchObject({ enabled: false });
  });

  it('the mailbox list shows the cap placement lowered, and why; the other mailbox its full cap', async () => {
    const reason = 'warmup placement: 62% of 40 warmup mails in the inbox over 7 days (91% over 30), below 80%: daily cap × 0.5';
    await h.store.db.updateTable('warmup_member').set({ cap_factor: 0.5, cap_reason: reason }).where('mailbox_id', '=', ownersMailbox.mailboxId!).execute();
    const list = (await owner.call('GET', `/api/workspaces/${ws}/mailboxes`)).json<{ mailboxes: Array<Record<string, unknown>> }>().mailboxes;
    const lowered = list.find((m) => m.id === ownersMailbox.mailboxId);
    const full = list.find((m) => m.id === repsMailbox.mailboxId);
    expect(lowered).toMatchObject({ dailyCap: 30, effectiveDailyCap: 15, todayCap: 15, capFactor: 0.5, capReason: reason });
    expect(full).toMatchObject({ dailyCap: 30, effectiveDailyCap: 30, todayCap: 30, capFactor: 1, capReason: null });
    // Placement recovered: the factor back at 1, the full cap and no reason.
    await h.store.db.updateTable('warmup_member').set({ cap_factor: 1, cap_reason: null }).where('mailbox_id', '=', ownersMailbox.mailboxId!).execute();
    const one = (await owner.call('GET', `/api/workspaces/${ws}/mailboxes`)).json<{ mailboxes: Array<Record<string, unknown>> }>().mailboxes.find((m) => m.id === ownersMailbox.mailboxId);
    expect(one).toMatchObject({ effectiveDailyCap: 30, todayCap: 30, capFactor: 1, capReason: null });
  });
});

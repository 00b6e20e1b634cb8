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
});

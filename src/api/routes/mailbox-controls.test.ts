import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerAndRep, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('mailbox caps, ramp, pause and resume (%s)', (backend) => {
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

  it('changes the daily cap and the ramp; a bad value is a 400 naming it', async () => {
    const url = `/api/workspaces/${ws}/mailboxes/${repsMailbox.mailboxId}`;
    const r = await owner.call('PATCH', url, { dailyCap: 40, ramp: { start: 5, step: 5 }, restartRamp: true });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ dailyCap: 40, todayCap: 5, ramp: { day: 1, days: 8 } });
    const flat = await owner.call('PATCH', url, { ramp: null });
    expect(flat.json()).toMatchObject({ todayCap: 40, ramp: null });
    const bad = await owner.call('PATCH', url, { dailyCap: -1 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.issues[0].path).toBe('body.dailyCap');
  });

  it("a member pauses and resumes their own mailbox, not a colleague's", async () => {
    const own = `/api/workspaces/${ws}/mailboxes/${repsMailbox.mailboxId}`;
    const paused = await rep.call('POST', `${own}/pause`, { reason: 'on holiday' });
    expect(paused.statusCode).toBe(200);
    expect(paused.json()).toMatchObject({ health: 'paused', healthReason: 'paused by a person: on holiday' });
    expect((await rep.call('POST', `${own}/pause`, { reason: 'x'.repeat(201) })).statusCode).toBe(400);
    expect((await rep.call('POST', `${own}/resume`)).json()).toMatchObject({ health: 'ok', healthReason: null });
    const theirs = await rep.call('POST', `/api/workspaces/${ws}/mailboxes/${ownersMailbox.mailboxId}/pause`, { reason: 'oops' });
    expect(theirs.statusCode).toBe(403);
    expect((await rep.call('PATCH', `/api/workspaces/${ws}/mailboxes/${ownersMailbox.mailboxId}`, { dailyCap: 1 })).statusCode).toBe(403);
  });
});

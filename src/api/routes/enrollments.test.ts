import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerFixture, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

describe.each(testBackends())('enrollment routes (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let g: ObjectIds;

  beforeAll(async () => {
    ({ h, ws, owner, g } = await ownerFixture(backend));
  }, 60_000);
  afterAll(async () => h?.close());

  it('lists by sequence and state', async () => {
    const r = await owner.call('GET', `/api/workspaces/${ws}/enrollments?sequenceId=${g.sequenceId}&state=active`);
    expect(r.statusCode).toBe(200);
    expect(r.json().items).toMatchObject([{ id: g.enrollmentId, leadEmail: 'lead-a@prospects.test', state: 'active' }]);
    expect((await owner.call('GET', `/api/workspaces/${ws}/enrollments?state=asleep`)).statusCode).toBe(400);
  });

  it('pause, resume and stop go through the engine; what the state refuses is a 409', async () => {
    const base = `/api/workspaces/${ws}/enrollments/${g.enrollmentId}`;
    const past = await owner.call('POST', `${base}/pause`, { until: '2001-01-01T00:00:00Z' });
    expect(past.statusCode).toBe(400);
    expect((await owner.call('POST', `${base}/pause`, { until: 'tomorrow' })).json().error.details.issues[0].path).toBe('body.until');
    const paused = await owner.call('POST', `${base}/pause`, { reason: 'asked to wait' });
    expect(paused.statusCode).toBe(200);
    expect(paused.json().state).toBe('paused');
    expect((await owner.call('POST', `${base}/resume`)).json().state).toBe('active');
    const stopped = await owner.call('POST', `${base}/stop`, {});
    expect(stopped.json().state).toBe('stopped');
    const again = await owner.call('POST', `${base}/resume`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('INVALID_TRANSITION');
    expect((await owner.call('GET', base)).json().state).toBe('stopped');
  });

  it('a possibly-sent step is listed with its state and sent again by hand once, under the same Message-ID; other states are refused', async () => {
    const db = h.store.db;
    // The fixture's enrollment (stopped by the test above) made live again: its step was possibly sent.
    const e = { id: g.enrollmentId! };
    await db.updateTable('enrollment').set({ state: 'active' }).where('id', '=', e.id).execute();
    const sendId = '00000000-0000-7000-8000-00000000a5e1';
    await db.insertInto('send_request').values({
      id: sendId, workspace_id: ws, enrollment_id: e.id, step_id: g.stepId!, mailbox_id: g.mailboxId!, state: 'possibly_sent',
      due_at: new Date(), message_id: '<ps-1@acme.test>', attempts: 1, last_error: 'possibly sent: the Sent folder holds its copy still marked pending',
    }).onConflict((oc) => oc.columns(['enrollment_id', 'step_id']).doUpdateSet({ id: sendId, state: 'possibly_sent', message_id: '<ps-1@acme.test>' })).execute();
    const base = `/api/workspaces/${ws}/enrollments/${e.id}/sends`;
    const list = await owner.call('GET', base);
    expect(list.statusCode).toBe(200);
    expect(list.json().items).toMatchObject([{ id: sendId, state: 'possibly_sent', messageId: '<ps-1@acme.test>', manualResend: false }]);
    const resent = await owner.call('POST', `${base}/${sendId}/resend`);
    expect(resent.statusCode).toBe(200);
    expect(resent.json()).toMatchObject({ id: sendId, state: 'queued', messageId: '<ps-1@acme.test>', manualResend: true });
    const twice = await owner.call('POST', `${base}/${sendId}/resend`);
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error.code).toBe('INVALID_TRANSITION');
    expect((await owner.call('POST', `${base}/00000000-0000-7000-8000-00000000dead/resend`)).statusCode).toBe(404);
  });
});

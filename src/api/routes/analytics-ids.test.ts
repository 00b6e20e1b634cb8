import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerFixture, seedGraph, seedWorkspace, type ApiHarness, type Browser, type ObjectIds } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';

/**
 * The analytics answer a 404 for a sequence or a mailbox the workspace does not have (issue 19
 * review): a made-up id, or another workspace's, used to get a page of zeros that read as "nothing
 * happened". The workspace's own ids answer 200, a removed mailbox's history included.
 */
describe.each(testBackends())('analytics refuse ids the workspace does not have (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let mine: ObjectIds;
  let theirs: ObjectIds;
  const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';

  beforeAll(async () => {
    ({ h, ws, owner, g: mine } = await ownerFixture(backend));
    const other = await seedWorkspace(h.store, 'Other Co', 'owner@other.test');
    theirs = await seedGraph(h.store, other.workspaceId, 'other', other.userId);
  }, 60_000);
  afterAll(async () => h?.close());

  const status = async (path: string) => (await owner.call('GET', `/api/workspaces/${ws}/${path}`)).statusCode;
  const BY_SEQUENCE = ['analytics?days=7', 'analytics/days.csv?days=7', 'analytics/breakdown?by=step', 'analytics/breakdown.csv?by=step', 'analytics/variants', 'analytics/funnel?days=7', 'analytics/reply-times?days=7', 'analytics/send-hours?days=7'];

  it('a sequence id: its own 200, a made-up one and another workspace’s 404', async () => {
    for (const path of BY_SEQUENCE) {
      const q = (id: string) => `${path}${path.includes('?') ? '&' : '?'}sequenceId=${id}`;
      expect([path, await status(q(mine.sequenceId!))]).toEqual([path, 200]);
      expect([path, await status(q(UNKNOWN))]).toEqual([path, 404]);
      expect([path, await status(q(theirs.sequenceId!))]).toEqual([path, 404]);
    }
    const r = await owner.call('GET', `/api/workspaces/${ws}/analytics/funnel?sequenceId=${theirs.sequenceId}`);
    expect(r.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'no such sequence in this workspace', details: { field: 'sequenceId' } });
    // Without an id, the whole workspace, as before.
    for (const path of BY_SEQUENCE) expect([path, await status(path)]).toEqual([path, 200]);
    // The experiments of a sequence (its variants' figures) likewise.
    expect(await status(`sequences/${mine.sequenceId}/experiments`)).toBe(200);
    expect(await status(`sequences/${theirs.sequenceId}/experiments`)).toBe(404);
    expect(await status(`sequences/${UNKNOWN}/experiments`)).toBe(404);
  });

  it('a mailbox id: its own 200 (a removed one too: its history stays), a made-up one and another workspace’s 404', async () => {
    expect(await status(`analytics/mailbox-days?mailboxId=${mine.mailboxId}`)).toBe(200);
    expect(await status(`analytics/mailbox-days?mailboxId=${UNKNOWN}`)).toBe(404);
    const r = await owner.call('GET', `/api/workspaces/${ws}/analytics/mailbox-days?mailboxId=${theirs.mailboxId}`);
    expect(r.statusCode).toBe(404);
    expect(r.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'no such mailbox in this workspace', details: { field: 'mailboxId' } });
    await h.store.db.updateTable('mailbox').set({ removed_at: new Date() }).where('id', '=', mine.mailboxId!).execute();
    expect(await status(`analytics/mailbox-days?mailboxId=${mine.mailboxId}`)).toBe(200);
    expect(await status('analytics/mailbox-days')).toBe(200);
  });
});

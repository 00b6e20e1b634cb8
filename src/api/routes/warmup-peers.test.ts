import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { federationIdentity } from '../../warmup/federation/identity.ts';
import { addMembership } from '../auth/accounts.ts';
import { hashPassword } from '../auth/passwords.ts';

describe.each(testBackends())('warmup peers, admins only (%s)', (backend) => {
  let h: ApiHarness;
  let ws: string;
  let owner: Browser;
  let rep: Browser;
  const me = federationIdentity(randomBytes(32), 'https://a.example.test', 'A');
  // A peer that does not listen: adding it needs no call; ending it sends no notice (it never became active).
  const peer = federationIdentity(randomBytes(32), 'http://127.0.0.1:9', 'B');

  beforeAll(async () => {
    h = await apiHarness(backend, { federation: { identity: me } });
    const w = await seedWorkspace(h.store, 'A', 'owner@example.test');
    ws = w.workspaceId;
    const accountId = '03a228f2-0000-7000-8000-0000000000f2';
    await h.store.db.insertInto('account').values({ id: accountId, email: 'rep@example.test', name: 'rep', password_hash: await hashPassword('member password 1') }).execute();
    await addMembership(h.store.db, { clock: systemClock, random: seededRandom('m') }, { accountId, workspaceId: ws, email: 'rep@example.test', name: 'rep', role: 'member' });
    owner = await login(h.app, 'owner@example.test', w.password);
    rep = await login(h.app, 'rep@example.test', 'member password 1');
  }, 60_000);
  afterAll(async () => h?.close());

  it('an admin reads the card, adds a peer (pending), cannot add it twice or add itself, and ends it; a member may not', async () => {
    const base = `/api/workspaces/${ws}/warmup`;
    expect((await owner.call('GET', `${base}/federation/card`)).json()).toEqual(me.card);
    expect((await rep.call('GET', `${base}/peers`)).statusCode).toBe(403);
    expect((await rep.call('POST', `${base}/peers`, { card: peer.card })).statusCode).toBe(403);

    const added = await owner.call('POST', `${base}/peers`, { card: peer.card });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toMatchObject({ state: 'pending', name: 'B', url: 'http://127.0.0.1:9', pool: 'default', remoteMembers: 0, failures: 0 });
    expect((await owner.call('POST', `${base}/peers`, { card: peer.card })).statusCode).toBe(409);
    expect((await owner.call('POST', `${base}/peers`, { card: me.card })).json()).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    expect((await owner.call('POST', `${base}/peers`, { card: { ...peer.card, signKey: 'x'.repeat(44) } })).statusCode).toBe(400);
    expect((await owner.call('GET', `${base}/peers`)).json().peers).toHaveLength(1);

    const id = added.json().id as string;
    const ended = await owner.call('DELETE', `${base}/peers/${id}`);
    expect(ended.json()).toMatchObject({ state: 'left', leftBy: 'us' });
    expect((await owner.call('POST', `${base}/peers/${id}/exchange`, {})).statusCode).toBe(409);
    // A new peering with the same installation may follow the ended one.
    expect((await owner.call('POST', `${base}/peers`, { card: peer.card })).statusCode).toBe(201);
  });
});

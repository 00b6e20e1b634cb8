import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../api/server.ts';
import { systemClock } from '../../common/clock.ts';
import { localKeyWrapper, Vault } from '../../mailbox/vault.ts';
import { Metrics } from '../../ops/metrics.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { hookContext, PIPEDRIVE_HOOK_USER } from './receiver.ts';
import { setHookSecret } from './register.ts';

/**
 * POST /hooks/crm/:connectionId as the API server mounts it, with the real vault: a verified
 * delivery moves the wake number and nothing else; a wrong one is 401 and counted, never a wake;
 * an unknown connection, a malformed id and a connection without a secret all get the server's
 * own 404, the same as a path no route serves; a body over the limit is 413.
 */
describe.each(testBackends())('the CRM webhook receiver (%s)', (backend) => {
  let store: TestStore;
  let app: ReturnType<typeof buildServer>;
  const metrics = new Metrics();
  const publicUrl = 'https://cadenza.example';
  const ws = randomUUID();
  const hubspot = randomUUID();
  const pipedrive = randomUUID();
  const bare = randomUUID();
  const pdSecret = 'pd-password-0123456789';
  const hsSecret = 'hs-app-client-secret';

  beforeAll(async () => {
    store = await freshStore(backend);
    const vault = new Vault(store, localKeyWrapper(Buffer.alloc(32, 7)));
    await store.db.insertInto('workspace').values({ id: ws, name: 'hooks', time_zone: 'UTC' }).execute();
    for (const [id, kind] of [[hubspot, 'hubspot'], [pipedrive, 'pipedrive'], [bare, 'twenty']] as const) {
      await store.db.insertInto('crm_connection').values({ id, workspace_id: ws, kind, base_url: 'http://crm.invalid', credentials: await vault.seal(ws, `crm:${id}`, 'token') }).execute();
    }
    await setHookSecret({ db: store.db, sealer: vault }, ws, hubspot, hsSecret);
    await store.db.updateTable('crm_connection').set({ hook_secret: await vault.seal(ws, hookContext(pipedrive), pdSecret) }).where('id', '=', pipedrive).execute();
    app = buildServer({ store, clock: systemClock, version: 'test', metrics, crmHooks: { sealer: vault, publicUrl, bodyLimit: 4096, onOutcome: (result) => metrics.crmHooks.inc({ result }) } });
    await app.ready();
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await store?.destroy();
  });

  const wakeOf = async (id: string) => Number((await store.db.selectFrom('crm_connection').select('wake_seq').where('id', '=', id).executeTakeFirstOrThrow()).wake_seq);
  const hubspotPost = (id: string, body: string, o: { secret?: string; at?: number } = {}) => {
    const ts = String(o.at ?? Date.now());
    const sig = createHmac('sha256', o.secret ?? hsSecret).update(`POST${publicUrl}/hooks/crm/${id}${body}${ts}`).digest('base64');
    return app.inject({ method: 'POST', url: `/hooks/crm/${id}`, headers: { 'content-type': 'application/json', 'x-hubspot-signature-v3': sig, 'x-hubspot-request-timestamp': ts }, payload: body });
  };
  const basic = (p: string) => `Basic ${Buffer.from(`${PIPEDRIVE_HOOK_USER}:${p}`).toString('base64')}`;

  it('HubSpot: a v3-signed delivery wakes the connection (204); a tampered body, an old timestamp or a wrong secret is 401 and wakes nothing', async () => {
    const body = '[{"eventId":1,"subscriptionType":"contact.propertyChange","objectId":51001}]';
    const before = await wakeOf(hubspot);
    expect((await hubspotPost(hubspot, body)).statusCode).toBe(204);
    expect(await wakeOf(hubspot)).toBe(before + 1);
    const ts = String(Date.now());
    const sig = createHmac('sha256', hsSecret).update(`POST${publicUrl}/hooks/crm/${hubspot}${body}${ts}`).digest('base64');
    const tampered = await app.inject({ method: 'POST', url: `/hooks/crm/${hubspot}`, headers: { 'content-type': 'application/json', 'x-hubspot-signature-v3': sig, 'x-hubspot-request-timestamp': ts }, payload: body.replace('51001', '51002') });
    expect(tampered.statusCode).toBe(401);
    expect((await hubspotPost(hubspot, body, { at: Date.now() - 6 * 60_000 })).statusCode).toBe(401);
    expect((await hubspotPost(hubspot, body, { secret: 'not-the-secret' })).statusCode).toBe(401);
    expect(await wakeOf(hubspot)).toBe(before + 1);
    expect(await metrics.text()).toMatch(/cadenza_crm_webhooks_total\{result="refused"\} 3/);
  });

  it('Pipedrive: the registered basic-auth password wakes it; another is 401', async () => {
    const before = await wakeOf(pipedrive);
    const post = (auth: string) => app.inject({ method: 'POST', url: `/hooks/crm/${pipedrive}`, headers: { 'content-type': 'application/json', authorization: auth }, payload: { meta: { action: 'change', entity: 'person', user_id: 1 } } });
    expect((await post(basic(pdSecret))).statusCode).toBe(204);
    expect((await post(basic('guess'))).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: `/hooks/crm/${pipedrive}`, payload: '{}', headers: { 'content-type': 'application/json' } })).statusCode).toBe(401);
    expect(await wakeOf(pipedrive)).toBe(before + 1);
  });

  it('an unknown connection, a malformed id and a connection without webhooks answer exactly as a path no route serves', async () => {
    const nowhere = await app.inject({ method: 'POST', url: '/hooks/nothing-here', headers: { authorization: basic(pdSecret) }, payload: '{}' });
    for (const id of [randomUUID(), 'not-a-uuid', bare]) {
      const r = await app.inject({ method: 'POST', url: `/hooks/crm/${id}`, headers: { 'content-type': 'application/json', authorization: basic(pdSecret) }, payload: '{}' });
      expect(r.statusCode).toBe(404);
      expect(JSON.parse(r.body).message.replace(id, 'X')).toBe(JSON.parse(nowhere.body).message.replace('nothing-here', 'crm/X'));
    }
    expect(await wakeOf(bare)).toBe(0);
  });

  it('a body over the limit is refused before it is read (413), and wakes nothing', async () => {
    const before = await wakeOf(pipedrive);
    const r = await app.inject({ method: 'POST', url: `/hooks/crm/${pipedrive}`, headers: { 'content-type': 'application/json', authorization: basic(pdSecret) }, payload: JSON.stringify({ pad: 'x'.repeat(5000) }) });
    expect(r.statusCode).toBe(413);
    expect(await wakeOf(pipedrive)).toBe(before);
  });
});

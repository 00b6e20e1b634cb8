import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { systemClock } from '../../common/clock.ts';
import { seededRandom } from '../../common/random.ts';
import { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { apiRoutes } from './index.ts';
import { signatureHeader, verify } from '../webhooks/signature.ts';

describe.each(testBackends())('webhook routes (%s)', (backend) => {
  let h: ApiHarness;
  let owner: Browser;
  let ws: string;
  let dispatcher: WebhookDispatcher;
  const rx = Fastify();
  const got: Array<{ body: string; signature: string }> = [];
  let url = '';

  beforeAll(async () => {
    rx.addContentTypeParser('application/json', { parseAs: 'string' }, (_r, b, done) => done(null, b));
    rx.post('/in', async (req) => {
      got.push({ body: req.body as string, signature: req.headers[signatureHeader] as string });
      return 'ok';
    });
    await rx.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(rx.server.address() as { port: number }).port}/in`;
    h = await apiHarness(backend, { webhooks: { allowPrivate: true, nudge: () => dispatcher.nudge() } });
    dispatcher = new WebhookDispatcher({ store: h.store, clock: systemClock, random: seededRandom('rx'), secrets: h.ctx.vault!, allowPrivate: true, pollMs: 60_000 });
    dispatcher.start();
    const w = await seedWorkspace(h.store, 'Hooks', 'owner@hooks.test');
    ws = w.workspaceId;
    owner = await login(h.app, 'owner@hooks.test', w.password);
  }, 60_000);
  afterAll(async () => {
    await dispatcher?.stop();
    await h?.close();
    await rx.close();
  });

  it('creates (secret shown once), lists, sends a signed test event on request, logs it, deletes', async () => {
    const bad = await owner.call('POST', `/api/workspaces/${ws}/webhooks`, { url: 'ftp://x.test/', events: ['reply'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/http or https/);
    expect((await owner.call('POST', `/api/workspaces/${ws}/webhooks`, { url, events: ['replied'] })).statusCode).toBe(400);

    const made = await owner.call('POST', `/api/workspaces/${ws}/webhooks`, { url, events: ['reply', 'task.due'], description: 'CRM' });
    expect(made.statusCode).toBe(201);
    const ep = made.json<{ id: string; secret: string; events: string[] }>();
    expect(ep).toMatchObject({ events: ['reply', 'task.due'], secret: expect.stringMatching(/^whsec_/) });
    const list = await owner.call('GET', `/api/workspaces/${ws}/webhooks`);
    expect(list.json().webhooks).toEqual([expect.objectContaining({ id: ep.id, url, description: 'CRM' })]);
    expect(list.body).not.toContain(ep.secret);

    // The dispatcher polls once a minute here: the test route wakes it.
    const t = await owner.call('POST', `/api/workspaces/${ws}/webhooks/${ep.id}/test`);
    expect(t.statusCode).toBe(202);
    for (let i = 0; i < 200 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]!.body)).toMatchObject({ type: 'test', id: t.json().eventId, workspaceId: ws });
    expect(verify(got[0]!.signature, got[0]!.body, ep.secret, Date.now()).ok).toBe(true);
    let log = await owner.call('GET', `/api/workspaces/${ws}/webhooks/${ep.id}/deliveries`);
    for (let i = 0; i < 100 && log.json().deliveries[0]?.state !== 'delivered'; i++) {
      await new Promise((r) => setTimeout(r, 25));
      log = await owner.call('GET', `/api/workspaces/${ws}/webhooks/${ep.id}/deliveries`);
    }
    expect(log.json().deliveries).toEqual([expect.objectContaining({ id: t.json().deliveryId, eventType: 'test', state: 'delivered', attempts: 1, responseCode: 200, lastError: null })]);
    expect((await owner.call('GET', `/api/workspaces/${ws}/webhooks/${ep.id}/deliveries?state=failed`)).json().deliveries).toEqual([]);

    expect((await owner.call('DELETE', `/api/workspaces/${ws}/webhooks/${ep.id}`)).statusCode).toBe(200);
    expect((await owner.call('GET', `/api/workspaces/${ws}/webhooks`)).json().webhooks).toEqual([]);
    expect((await owner.call('GET', `/api/workspaces/${ws}/webhooks/${ep.id}/deliveries`)).statusCode).toBe(404);
  });

  it('a secret is shown once: no later answer on any route carries it; rotate-secret shows the new one once, and both sign during the overlap', async () => {
    const made = await owner.call('POST', `/api/workspaces/${ws}/webhooks`, { url, events: ['reply'] });
    const ep = made.json<{ id: string; secret: string }>();
    const stored = await h.store.db.selectFrom('webhook_endpoint').selectAll().where('id', '=', ep.id).executeTakeFirstOrThrow();
    expect(stored.legacy_secret).toBeNull();
    expect(Buffer.from(stored.secret_sealed!).includes(Buffer.from(ep.secret))).toBe(false);
    expect(Buffer.from(stored.secret_sealed!).includes(Buffer.from(ep.secret.slice(6), 'base64url'))).toBe(false);

    const rotated = await owner.call('POST', `/api/workspaces/${ws}/webhooks/${ep.id}/rotate-secret?keepPreviousHours=2`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const next = rotated.json<{ id: string; secret: string; previousSecretExpiresAt: string }>();
    expect(next).toMatchObject({ id: ep.id, secret: expect.stringMatching(/^whsec_/) });
    expect(next.secret).not.toBe(ep.secret);
    expect(rotated.body).not.toContain(ep.secret);
    expect(Date.parse(next.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(7_000_000);
    expect((await owner.call('POST', `/api/workspaces/${ws}/webhooks/${ep.id}/rotate-secret?keepPreviousHours=999`)).statusCode).toBe(400);

    got.length = 0;
    await owner.call('POST', `/api/workspaces/${ws}/webhooks/${ep.id}/test`);
    for (let i = 0; i < 200 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(verify(got[0]!.signature, got[0]!.body, next.secret, Date.now()).ok).toBe(true);
    expect(verify(got[0]!.signature, got[0]!.body, ep.secret, Date.now()).ok).toBe(true);

    // Every GET of the workspace, and every webhook route but the two that make a secret.
    const ids: Record<string, string> = { workspaceId: ws, webhookId: ep.id };
    const calls = apiRoutes.filter((r) => r.url.startsWith('/api/workspaces/:workspaceId') && (r.method === 'GET' || (r.tags.includes('webhooks') && !/rotate-secret$/.test(r.url) && !(r.method === 'POST' && r.url.endsWith('/webhooks')))));
    expect(calls.some((r) => r.method === 'DELETE')).toBe(true);
    let checked = 0;
    for (const r of calls.sort((x, y) => (x.method === 'DELETE' ? 1 : 0) - (y.method === 'DELETE' ? 1 : 0))) {
      const path = r.url.replace(/:([A-Za-z]+)/g, (_m, n: string) => ids[n] ?? '00000000-0000-4000-8000-000000000000');
      const res = await owner.call(r.method, path, r.example?.(ids).body);
      for (const s of [ep.secret, next.secret]) expect(res.body, `${r.method} ${r.url}`).not.toContain(s);
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
  });
});

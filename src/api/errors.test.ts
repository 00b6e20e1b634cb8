import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import Fastify, { type FastifyInstance } from 'fastify';
import { cadenzaError } from '../common/errors.ts';
import { systemClock } from '../common/clock.ts';
import { seededRandom } from '../common/random.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { registerApi } from './api.ts';
import { defaultAuthSettings } from './context.ts';
import { defineRoute } from './http/route.ts';

const SECRET = 'postgres://cadenza:hunter2@db.internal/cadenza';

const routes = [
  defineRoute({
    method: 'GET', url: '/api/test/crash', summary: 'crash', tags: ['test'], access: 'public', response: z.object({}),
    handler: async () => { throw new Error(`connect failed for ${SECRET}`); },
  }),
  defineRoute({
    method: 'GET', url: '/api/test/store-down', summary: 'store down', tags: ['test'], access: 'public', response: z.object({}),
    handler: async () => { throw cadenzaError('STORE_UNAVAILABLE', `cannot reach ${SECRET}`); },
  }),
  defineRoute({
    method: 'GET', url: '/api/test/bad-answer', summary: 'answer off schema', tags: ['test'], access: 'public', response: z.object({ n: z.number() }),
    handler: async () => ({ n: SECRET }) as unknown as { n: number },
  }),
  defineRoute({
    method: 'POST', url: '/api/test/conflict', summary: 'conflict', tags: ['test'], access: 'public', body: z.object({ n: z.number().int().min(1) }),
    example: () => ({ body: { n: 1 } }), response: z.object({}),
    handler: async ({ body }) => { throw cadenzaError('ALREADY_ENROLLED', `lead ${body.n} is enrolled`, { leadId: body.n }); },
  }),
];

describe('API errors', () => {
  let store: TestStore;
  let app: FastifyInstance;
  let logged = '';
  beforeAll(async () => {
    store = await freshStore('pglite');
    app = Fastify({ logger: { level: 'error', stream: { write: (s: string) => { logged += s; } } } });
    registerApi(app, { store, clock: systemClock, random: seededRandom(1), publicUrl: 'http://localhost', ...defaultAuthSettings }, routes);
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await store.destroy();
  });

  it('a 5xx says only that it failed and its request id; the cause is logged, never sent', async () => {
    for (const [url, status, code] of [['/api/test/crash', 500, 'INTERNAL'], ['/api/test/store-down', 503, 'STORE_UNAVAILABLE'], ['/api/test/bad-answer', 500, 'INTERNAL']] as const) {
      const r = await app.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(status);
      expect(r.body).not.toContain('hunter2');
      expect(r.body).not.toContain('at ');
      expect(r.json()).toEqual({ error: { code, message: expect.any(String), details: { requestId: expect.any(String) } } });
    }
    expect(logged).toContain('api request failed');
  });

  it('domain codes map to 4xx with message and details; validation names the field', async () => {
    const c = await app.inject({ method: 'POST', url: '/api/test/conflict', payload: { n: 2 } });
    expect(c.statusCode).toBe(409);
    expect(c.json()).toEqual({ error: { code: 'ALREADY_ENROLLED', message: 'lead 2 is enrolled', details: { leadId: 2 } } });
    const v = await app.inject({ method: 'POST', url: '/api/test/conflict', payload: { n: 0 } });
    expect(v.statusCode).toBe(400);
    expect(v.json().error).toMatchObject({ code: 'INVALID_INPUT', details: { issues: [{ path: 'body.n' }] } });
    const j = await app.inject({ method: 'POST', url: '/api/test/conflict', headers: { 'content-type': 'application/json' }, payload: '{"n":' });
    expect(j.statusCode).toBe(400);
    expect(j.json().error.code).toBe('INVALID_INPUT');
    const nf = await app.inject({ method: 'GET', url: '/api/nothing-here' });
    expect(nf.statusCode).toBe(404);
    expect(nf.json().error.code).toBe('NOT_FOUND');
  });
});

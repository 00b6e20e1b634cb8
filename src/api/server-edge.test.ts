import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { defaultAuthSettings } from './context.ts';
import { buildServer } from './server.ts';
import { systemClock } from '../common/clock.ts';
import { redactPaths } from '../common/logger.ts';
import { seededRandom } from '../common/random.ts';
import { localKeyWrapper, Vault } from '../mailbox/vault.ts';
import { Metrics } from '../ops/metrics.ts';
import { openStore } from '../store/store.ts';
import { migrate } from '../store/migrate.ts';
import { webAppCsp } from './http/security-headers.ts';

/** A pino logger whose lines are kept, with the process logger's redaction. */
function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { log: pino({ level: 'info', redact: { paths: redactPaths, censor: '[redacted]' } }, sink), lines };
}

describe('the HTTP edge of the server', () => {
  it('/readyz tells an anonymous caller only that the store is unavailable; the cause is logged under the request id', async () => {
    const store = await openStore({});
    const { log, lines } = capturedLog();
    const app = buildServer({ store, clock: systemClock, version: 'test', log });
    try {
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await store.close();
      const r = await app.inject({ method: 'GET', url: '/readyz' });
      expect(r.statusCode).toBe(503);
      const body = r.json<Record<string, unknown>>();
      expect(Object.keys(body).sort()).toEqual(['requestId', 'status']);
      expect(body.status).toBe('unavailable');
      const line = lines.find((l) => l.reqId === body.requestId);
      expect(line?.msg).toMatch(/store does not answer/);
      expect(JSON.stringify(line?.err)).toMatch(/destroyed/);
      expect(r.body).not.toMatch(/destroyed/);
    } finally {
      await app.close();
    }
  });

  it('a 5xx from an /api route is logged with its request id, and the password of the request is not', async () => {
    const store = await openStore({});
    await migrate(store);
    const { log, lines } = capturedLog();
    const app = buildServer({ store, clock: systemClock, version: 'test', log, api: { random: seededRandom('e'), vault: new Vault(store, localKeyWrapper(Buffer.alloc(32, 1))), publicUrl: 'http://localhost', ...defaultAuthSettings } });
    try {
      await app.ready();
      await store.close();
      const r = await app.inject({ method: 'POST', url: '/api/auth/login', headers: { authorization: 'Bearer cdz_secretkey' }, payload: { email: 'a@b.test', password: 'hunter2-very-secret' } });
      expect(r.statusCode).toBeGreaterThanOrEqual(500);
      const id = r.json<{ error: { details: { requestId: string } } }>().error.details.requestId;
      expect(lines.some((l) => l.reqId === id && l.level === 50)).toBe(true);
      expect(JSON.stringify(lines)).not.toContain('hunter2');
      expect(JSON.stringify(lines)).not.toContain('cdz_secretkey');
    } finally {
      await app.close();
    }
  });

  it('/metrics can be protected by a token', async () => {
    const store = await openStore({});
    const app = buildServer({ store, clock: systemClock, version: 'test', metrics: new Metrics(), metricsToken: 'a-metrics-token-0123456789' });
    try {
      expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong-token-0123456789xx' } })).statusCode).toBe(401);
      const ok = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer a-metrics-token-0123456789' } });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('cadenza_');
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('answers with security headers: a CSP without inline script that forbids framing, nosniff, no referrer', async () => {
    const store = await openStore({});
    await migrate(store);
    const app = buildServer({ store, clock: systemClock, version: 'test', api: { random: seededRandom('h'), vault: new Vault(store, localKeyWrapper(Buffer.alloc(32, 1))), publicUrl: 'http://localhost', ...defaultAuthSettings } });
    try {
      for (const url of ['/', '/leads', '/healthz', '/api/auth/me']) {
        const r = await app.inject({ method: 'GET', url });
        expect(r.headers['content-security-policy'], url).toBe(webAppCsp);
        expect(r.headers['x-content-type-options'], url).toBe('nosniff');
        expect(r.headers['referrer-policy'], url).toBe('no-referrer');
      }
      expect(webAppCsp).toContain("frame-ancestors 'none'");
      expect(webAppCsp).toMatch(/script-src 'self'(;|$)/);
      expect(webAppCsp).not.toContain('unsafe-inline');
      expect((await app.inject({ method: 'GET', url: '/docs/' })).headers['content-security-policy']).toBe("frame-ancestors 'none'");
    } finally {
      await app.close();
      await store.close();
    }
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerWebApp } from './static.ts';

describe('serving the web app', () => {
  let dir: string;
  let app: FastifyInstance;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cadenza-web-static-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="root"></div>');
    writeFileSync(join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
    writeFileSync(join(dir, 'favicon.svg'), '<svg/>');
    app = Fastify();
    app.get('/api/ping', async () => ({ ok: true }));
    registerWebApp(app, dir);
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves hashed assets for a year and index.html to be checked every time', async () => {
    const asset = await app.inject({ url: '/assets/index-AbC123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const root = await app.inject({ url: '/' });
    expect(root.statusCode).toBe(200);
    expect(root.headers['content-type']).toMatch(/^text\/html/);
    expect(root.headers['cache-control']).toBe('no-cache');
    expect((await app.inject({ url: '/favicon.svg' })).headers['cache-control']).toBe('no-cache');
  });

  it("answers the app's own paths with index.html, so a reload opens the same screen", async () => {
    for (const url of ['/leads', '/sequences/0190aaaa-0000-7000-8000-000000000000', '/inbox?x=1']) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(200);
      expect(r.body).toContain('<div id="root">');
    }
  });

  it('never answers an API path or a missing asset with the page', async () => {
    expect((await app.inject({ url: '/api/ping' })).json()).toEqual({ ok: true });
    for (const url of ['/api/nope', '/api', '/assets/gone-123.js']) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(404);
      expect(r.json().error.code, url).toBe('NOT_FOUND');
    }
    expect((await app.inject({ method: 'POST', url: '/leads' })).statusCode).toBe(404);
  });

  it('says the app is not built instead of a bare 404 when dist/web is missing', async () => {
    const bare = Fastify();
    registerWebApp(bare, join(dir, 'nowhere'));
    const r = await bare.inject({ url: '/' });
    expect(r.statusCode).toBe(503);
    expect(r.body).toContain('npm run build:web');
    await bare.close();
  });
});

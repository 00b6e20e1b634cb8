import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { cadenzaError } from '../common/errors.ts';
import { apiErrorHandler } from './http/errors.ts';

/** Where `npm install` (postinstall: vite build, web/vite.config.ts) puts the web app. */
export const defaultWebRoot = fileURLToPath(new URL('../../dist/web/', import.meta.url));

// Vite names every asset after its content hash: a new build means new names, so a browser may
// keep an asset forever. index.html names the current assets and must be checked on every load.
const FOREVER = 'public, max-age=31536000, immutable';
const ALWAYS_CHECK = 'no-cache';

/**
 * Serves the web app on the API's port: its files, and index.html for any other GET path outside
 * /api so that a reload or a shared link of /leads or /sequences/<id> opens that screen (the app
 * routes in the browser). /api paths never fall back: an unknown API route is a JSON 404.
 */
export function registerWebApp(app: FastifyInstance, root: string = defaultWebRoot): void {
  if (!existsSync(`${root}/index.html`)) {
    // The API still works; the page says why there is no app instead of a bare 404.
    app.get('/', { schema: { hide: true } }, async (_req, reply) =>
      reply
        .code(503)
        .type('text/html; charset=utf-8')
        .send('<!doctype html><title>Cadenza</title><p>The web app is not built. Run <code>npm run build:web</code> (it runs on <code>npm install</code>) and restart.</p>'),
    );
    return;
  }
  void app.register(fastifyStatic, {
    root,
    prefix: '/',
    // Routes for the files present at start; everything else reaches the fallback below.
    wildcard: false,
    index: false,
    cacheControl: false,
    setHeaders: (reply: FastifyReply, path: string) => {
      reply.header('cache-control', /[\\/]assets[\\/]/.test(path) ? FOREVER : ALWAYS_CHECK);
    },
  });
  const sendIndex = (reply: FastifyReply) => reply.header('cache-control', ALWAYS_CHECK).sendFile('index.html', root);
  app.get('/', { schema: { hide: true } }, async (_req, reply) => sendIndex(reply));
  app.get('/*', { schema: { hide: true } }, async (req, reply) => {
    const path = req.url.split('?', 1)[0]!;
    if (path === '/api' || path.startsWith('/api/') || path.startsWith('/assets/')) {
      return apiErrorHandler(cadenzaError('NOT_FOUND', `no route GET ${path}`), req, reply);
    }
    return sendIndex(reply);
  });
}

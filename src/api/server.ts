import cookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import type { Metrics } from '../ops/metrics.ts';
import type { Store } from '../store/store.ts';
import { registerTracking, type TrackingDeps } from '../tracking/index.ts';
import { registerOAuthRoutes, type OAuthRoutesDeps } from '../mailbox/oauth/routes.ts';
import type { PushRegistry } from '../mailbox/sync/push-registry.ts';
import { gmailPushRoutes, graphPushRoutes } from '../mailbox/sync/push-routes.ts';
import { registerApi } from './api.ts';
import { oauthCaller } from './auth/oauth-caller.ts';
import type { ApiContext } from './context.ts';
import { registerDocs } from './http/docs.ts';
import { registerWebApp } from './static.ts';

export interface ApiDeps {
  store: Store;
  clock: Clock;
  version: string;
  logger?: boolean | object;
  /** Fastify's trustProxy (CADENZA_TRUST_PROXY): whose X-Forwarded-For gives req.ip, which the sign-in limits key on. */
  trustProxy?: boolean | number | string[];
  /** Open pixel, click redirect and unsubscribe endpoints (src/tracking). */
  tracking?: Omit<TrackingDeps, 'store' | 'clock'>;
  /** Connecting Google and Microsoft mailboxes: /oauth/:provider/start and /oauth/callback (src/mailbox/oauth). */
  oauth?: OAuthRoutesDeps;
  /** Gmail (Pub/Sub) and Graph push notifications: POST /push/gmail and /push/graph (src/mailbox/sync/push-routes.ts). */
  push?: { registry: PushRegistry; verificationToken: string };
  /** Served as Prometheus text on GET /metrics. */
  metrics?: Metrics;
  /** The /api routes (src/api/routes), with /openapi.json and /docs; absent: not served. */
  api?: Omit<ApiContext, 'store' | 'clock'>;
}

/**
 * The HTTP server. This first version serves health endpoints; the API routes, authentication and
 * the web app arrive with their issues and register here.
 */
export function buildServer(deps: ApiDeps): FastifyInstance {
  const tp = deps.trustProxy ?? false;
  // A hop count as the function Fastify's types take: trust the nearest n proxies.
  const app = Fastify({ logger: deps.logger ?? false, trustProxy: typeof tp === 'number' ? (_addr: string, hop: number) => hop < tp : tp });
  // First, and every route after it once it has loaded (app.after), so that the OpenAPI document
  // sees them all: a route added before @fastify/swagger's onRoute hook exists would be missing.
  registerDocs(app, deps.version);
  app.after(() => registerRoutes(app, deps));
  return app;
}

function registerRoutes(app: FastifyInstance, deps: ApiDeps): void {
  if (deps.api) registerApi(app, { store: deps.store, clock: deps.clock, ...deps.api });

  if (deps.tracking) registerTracking(app, { store: deps.store, clock: deps.clock, ...deps.tracking });
  if (deps.oauth) {
    const oauth = deps.oauth;
    // The connect routes know the person by their session cookie (api/auth/oauth-caller.ts).
    const caller = deps.api ? oauthCaller({ store: deps.store, clock: deps.clock, ...deps.api }) : undefined;
    void app.register(async (scope) => {
      await scope.register(cookie);
      registerOAuthRoutes(scope, { ...oauth, ...(caller ? { caller } : {}) });
    });
  }
  if (deps.push) {
    void app.register(gmailPushRoutes, { registry: deps.push.registry, verificationToken: deps.push.verificationToken });
    void app.register(graphPushRoutes, { registry: deps.push.registry });
  }

  const metrics = deps.metrics;
  if (metrics) {
    app.get('/metrics', async (_req, reply) => reply.type(metrics.contentType).send(await metrics.text()));
  }

  app.get('/healthz', async () => ({ status: 'ok', version: deps.version }));

  // Ready only when the store answers: a load balancer should not route to a process whose database is gone.
  app.get('/readyz', async (_req, reply) => {
    try {
      await sql`select 1`.execute(deps.store.db);
      return { status: 'ready', backend: deps.store.backend };
    } catch (e) {
      return reply.code(503).send({ status: 'unavailable', error: (e as Error).message });
    }
  });

  // Last: the web app's fallback answers GET paths no route above took (src/api/static.ts).
  if (deps.api) registerWebApp(app);
}

import { timingSafeEqual, createHash } from 'node:crypto';
import cookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import type { Store } from '../store/store.ts';
import { registerTracking, type TrackingDeps } from '../tracking/index.ts';
import { registerOAuthRoutes, type OAuthRoutesDeps } from '../mailbox/oauth/routes.ts';
import type { PushRegistry } from '../mailbox/sync/push-registry.ts';
import { gmailPushRoutes, graphPushRoutes } from '../mailbox/sync/push-routes.ts';
import { crmHookRoutes, type CrmHookRouteOptions } from '../crm/webhooks/routes.ts';
import { federationRoutes, type FederationRouteDeps } from '../warmup/federation/routes.ts';
import { registerApi } from './api.ts';
import { oauthCaller } from './auth/oauth-caller.ts';
import { registerCrmOAuthCallback } from './crm-oauth-callback.ts';
import { registerSsoCallback } from './sso-callback.ts';
import type { ApiContext } from './context.ts';
import { registerDocs } from './http/docs.ts';
import { loggedCause } from './http/logged-cause.ts';
import { SERVER_TIMEOUTS } from './http/drain.ts';
import { registerSecurityHeaders } from './http/security-headers.ts';
import { sipWsOrigin } from '../dialer/settings.ts';
import { boundUnreadBodies } from './http/unread-body.ts';
import { registerWebApp } from './static.ts';

export interface ApiDeps {
  store: Store;
  clock: Clock;
  version: string;
  /** Where 5xx answers are logged with their request id (pino, credentials redacted: common/logger.ts); absent: not logged. */
  log?: Logger;
  /** Fastify's trustProxy (CADENZA_TRUST_PROXY): whose X-Forwarded-For gives req.ip, which the sign-in limits key on. */
  trustProxy?: boolean | number | string[];
  /** Open pixel, click redirect and unsubscribe endpoints (src/tracking). */
  tracking?: Omit<TrackingDeps, 'store' | 'clock'>;
  /** Connecting Google and Microsoft mailboxes: /oauth/:provider/start and /oauth/callback (src/mailbox/oauth). */
  oauth?: OAuthRoutesDeps;
  /** Gmail (Pub/Sub) and Graph push notifications: POST /push/gmail and /push/graph (src/mailbox/sync/push-routes.ts). */
  push?: { registry: PushRegistry; verificationToken: string };
  /** CRM webhooks as triggers: POST /hooks/crm/:connectionId (src/crm/webhooks/routes.ts); absent: CRMs are polled only. */
  crmHooks?: Omit<CrmHookRouteOptions, 'db' | 'clock'>;
  /** Served as Prometheus text on GET /metrics. */
  metrics?: Metrics;
  /** When set, GET /metrics needs `Authorization: Bearer <token>` (CADENZA_METRICS_TOKEN); unset: public. */
  metricsToken?: string;
  /** Custom tracking hosts (src/tracking/domains): the ACME challenge route and the guard that lets only tracking routes answer on them. */
  customHosts?: { register(app: FastifyInstance): void };
  /** Warmup federation's signed ends: /federation/card and /federation/v1/* (src/warmup/federation/routes.ts); absent: not served. */
  federation?: Omit<FederationRouteDeps, 'store' | 'clock'>;
  /** The /api routes (src/api/routes), with /openapi.json and /docs; absent: not served. */
  api?: Omit<ApiContext, 'store' | 'clock'>;
}

/**
 * The HTTP server. This first version serves health endpoints; the API routes, authentication and
 * the web app arrive with their issues and register here.
 */
export function buildServer(deps: ApiDeps): FastifyInstance {
  const tp = deps.trustProxy ?? false;
  const app: FastifyInstance = Fastify({
    ...(deps.log ? { loggerInstance: deps.log as FastifyBaseLogger } : { logger: false }),
    // Each request is not logged; its failures are (below and http/errors.ts), under its id.
    logController: new LogController({ disableRequestLogging: true }),
    requestTimeout: SERVER_TIMEOUTS.requestMs,
    keepAliveTimeout: SERVER_TIMEOUTS.keepAliveMs,
    http: { headersTimeout: SERVER_TIMEOUTS.headersMs },
    // A hop count as the function Fastify's types take: trust the nearest n proxies.
    trustProxy: typeof tp === 'number' ? (_addr: string, hop: number) => hop < tp : tp,
  });
  // A 5xx from any route (tracking, OAuth, push, health) is logged with its request id, the id a
  // 5xx body names; /api's own handler logs its cause (http/errors.ts), this logs the rest.
  app.addHook('onResponse', async (req, reply) => {
    if (reply.statusCode >= 500 && !loggedCause.has(req)) req.log.error({ reqId: req.id, method: req.method, url: req.url.split('?', 1)[0], status: reply.statusCode }, 'request failed');
  });
  registerSecurityHeaders(app, { connectOrigins: deps.api?.dialer ? [sipWsOrigin(deps.api.dialer.wsUrl)] : [] });
  boundUnreadBodies(app);
  // Before any route, so the guard's hook covers them all.
  deps.customHosts?.register(app);
  // First, and every route after it once it has loaded (app.after), so that the OpenAPI document
  // sees them all: a route added before @fastify/swagger's onRoute hook exists would be missing.
  registerDocs(app, deps.version);
  app.after(() => registerRoutes(app, deps));
  return app;
}

function registerRoutes(app: FastifyInstance, deps: ApiDeps): void {
  if (deps.api) {
    registerApi(app, { store: deps.store, clock: deps.clock, ...deps.api });
    // Where the CRMs' consent pages send the admin back (crm/oauth/flow.ts), known by the session cookie.
    registerCrmOAuthCallback(app, { store: deps.store, clock: deps.clock, ...deps.api });
    // Where a workspace's identity provider sends the browser back after single sign-on (api/auth/sso/).
    registerSsoCallback(app, { store: deps.store, clock: deps.clock, ...deps.api });
  }

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

  // Verified per connection, on the real clock (HubSpot's timestamps are real time).
  if (deps.crmHooks) void app.register(crmHookRoutes, { db: deps.store.db, clock: deps.api?.realClock ?? deps.clock, ...deps.crmHooks });

  // Signed by the peer installation, on the real clock (a demo's time would put every signature outside the window).
  if (deps.federation) void app.register(federationRoutes, { store: deps.store, clock: deps.api?.realClock ?? deps.clock, ...deps.federation });

  const metrics = deps.metrics;
  if (metrics) {
    const allowed = bearerCheck(deps.metricsToken);
    app.get('/metrics', async (req, reply) => {
      if (!allowed(req)) return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: { code: 'UNAUTHENTICATED', message: 'send the metrics token as Authorization: Bearer <token> (CADENZA_METRICS_TOKEN)', details: {} } });
      return reply.type(metrics.contentType).send(await metrics.text());
    });
  }

  app.get('/healthz', async () => ({ status: 'ok', version: deps.version }));

  // Ready only when the store answers: a load balancer should not route to a process whose
  // database is gone. Anyone may ask, so the cause (a host name, a connection string, a path) is
  // logged under the request id, never answered.
  app.get('/readyz', async (req, reply) => {
    try {
      await sql`select 1`.execute(deps.store.db);
      return { status: 'ready', backend: deps.store.backend };
    } catch (e) {
      req.log.error({ err: e, reqId: req.id }, 'readiness check: the store does not answer');
      loggedCause.add(req);
      return reply.code(503).send({ status: 'unavailable', requestId: req.id });
    }
  });

  // Last: the web app's fallback answers GET paths no route above took (src/api/static.ts).
  if (deps.api) registerWebApp(app);
}

/** A constant-time check of `Authorization: Bearer <token>`; no token configured: everyone passes. */
function bearerCheck(token: string | undefined): (req: FastifyRequest) => boolean {
  if (!token) return () => true;
  const want = createHash('sha256').update(token).digest();
  return (req) => {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    return m !== null && timingSafeEqual(createHash('sha256').update(m[1]!).digest(), want);
  };
}

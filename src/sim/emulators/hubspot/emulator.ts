import { systemClock, type Clock } from '../../../common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { TokenRegistry } from '../tokens.ts';
import type { HubSpotRouteContext } from './context.ts';
import { hubspotErrors } from './errors.ts';
import { rateLimitHeaders, RollingWindow } from './rate-limit.ts';
import { registerObjectRoutes } from './routes/objects.ts';
import { registerPropertyRoutes } from './routes/properties.ts';
import type { EngagementType } from './schema.ts';
import { HubSpotStore, type CrmRecord } from './store.ts';

/**
 * HubSpot's CRM API (v3, as developers.hubspot.com documents it) on loopback, for the CRM sync
 * connector (src/crm/hubspot/): contacts, the notes, emails, calls and tasks engagements (create,
 * batch create, search), custom properties, private-app bearer tokens, the documented rate limits
 * with their 429 bodies and headers, and fault injection. One account ("portal") per emulator;
 * one per test or test file; close() it.
 *
 * Route groups, one file each under routes/: objects (create, batch create, search) and
 * properties (create a property, create a group). The order of checks on every request: an
 * outage (503), the token (401), the rate limits (429), a queued fault, then the route.
 */
export interface HubSpotEmulatorOptions {
  /** Stamps records and drives the rate limits; a SimClock makes both exact. */
  clock?: Clock;
  /** Requests per rolling window per app (private apps on Free/Starter: 100 per 10 s). */
  requestsPerWindow?: number;
  windowMs?: number;
  /** Search requests per rolling second per app (documented 5; default 4, what Cadenza plans for). */
  searchesPerSecond?: number;
  /** A record shows in search results only this long after it was written (documented: "a few moments"; default 0). */
  searchLagMs?: number;
}

export interface HubSpotEmulator {
  /** In place of https://api.hubapi.com. */
  baseUrl: string;
  /** A test issues the private app's token: `emu.tokens.issue('portal')`; `expire` it for the 401. */
  tokens: TokenRegistry;
  faults: FaultInjector;
  store: HubSpotStore;
  /** Every request, in order, with what it was answered. */
  log: RequestRecord[];
  /** Seeds a contact as if a person had added it in HubSpot; returns its id. */
  addContact(properties: { email: string; firstname?: string; lastname?: string }): string;
  /** The engagement records of one type, with their properties and associations, in creation order. */
  records(type: EngagementType): CrmRecord[];
  /** How many requests each route got (route names as for faults), refused ones included. */
  requestCounts(): Record<string, number>;
  /**
   * The most requests any app made in one rolling window, and searches in one rolling second,
   * refused or not; and how many the limits refused. Within the limits: peak ≤ the limit, refused 0.
   */
  rateStats(): { peakPerWindow: number; peakSearchesPerSecond: number; refused: number };
  /** Answers every request 503 until the clock reaches `untilMs`. */
  outage(untilMs: number): void;
  /** Delays every answer by `ms` of the emulator's clock before processing (0: none). */
  slow(ms: number): void;
  close(): Promise<void>;
}

export async function startHubSpotEmulator(opts: HubSpotEmulatorOptions = {}): Promise<HubSpotEmulator> {
  const clock = opts.clock ?? systemClock;
  const store = new HubSpotStore(clock);
  const tokens = new TokenRegistry('pat-na1-emu');
  const faults = new FaultInjector();
  const log: RequestRecord[] = [];
  // One pair of limits per app (the token's user): a new token for the same app shares them.
  const limits = new Map<string, { window: RollingWindow; search: RollingWindow }>();
  const limitsOf = (app: string) => {
    let l = limits.get(app);
    if (!l) {
      l = { window: new RollingWindow(opts.requestsPerWindow ?? 100, opts.windowMs ?? 10_000), search: new RollingWindow(opts.searchesPerSecond ?? 4, 1000) };
      limits.set(app, l);
    }
    return l;
  };
  let outageUntil = -Infinity;
  let delayMs = 0;

  const ctx: HubSpotRouteContext = {
    store,
    searchLagMs: opts.searchLagMs ?? 0,
    run(route, req, reply, handler, o = {}) {
      let headers: Record<string, string> = {};
      const guard = (): EmulatorReply | null => {
        const now = clock.now();
        if (now < outageUntil) return hubspotErrors.unavailable();
        const t = tokens.check(req.headers.authorization);
        if (!t.ok) return t.why === 'expired' ? hubspotErrors.expiredAuthentication() : hubspotErrors.invalidAuthentication();
        const l = limitsOf(t.user);
        const withinWindow = l.window.admit(now);
        if (!o.search) headers = rateLimitHeaders(l.window, now);
        if (!withinWindow) return hubspotErrors.tenSecondly(t.user, headers);
        if (o.search && !l.search.admit(now)) return hubspotErrors.secondly(t.user);
        return null;
      };
      const decorate = (r: EmulatorReply): EmulatorReply => ({ ...r, headers: { ...headers, ...r.headers } });
      return runRoute({ faults, log }, route, req, reply, guard, async () => {
        if (delayMs > 0) await clock.sleep(delayMs);
        return handler();
      }, decorate);
    },
  };

  const server = await startEmulatorServer((app) => {
    registerObjectRoutes(app, ctx);
    registerPropertyRoutes(app, ctx);
    app.setNotFoundHandler((_req, reply) => reply.code(404).send(hubspotErrors.notFound().body));
  });

  return {
    baseUrl: server.origin,
    tokens,
    faults,
    store,
    log,
    addContact(properties) {
      const existing = store.contactByEmail(properties.email);
      if (existing) throw new Error(`addContact: ${properties.email} exists (id ${existing.id})`);
      return store.create('contacts', { ...properties }).id;
    },
    records: (type) => store.all(type),
    requestCounts() {
      const out: Record<string, number> = {};
      for (const r of log) out[r.route] = (out[r.route] ?? 0) + 1;
      return out;
    },
    rateStats() {
      const all = [...limits.values()];
      return {
        peakPerWindow: Math.max(0, ...all.map((l) => l.window.peak)),
        peakSearchesPerSecond: Math.max(0, ...all.map((l) => l.search.peak)),
        refused: all.reduce((n, l) => n + l.window.refused + l.search.refused, 0),
      };
    },
    outage(untilMs) {
      outageUntil = untilMs;
    },
    slow(ms) {
      delayMs = ms;
    },
    close: server.close,
  };
}

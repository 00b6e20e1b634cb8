import { systemClock, type Clock } from '../../../common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { TokenRegistry } from '../tokens.ts';
import type { HubSpotRouteContext } from './context.ts';
import { hubspotErrors } from './errors.ts';
import { rateLimitHeaders, RollingWindow } from './rate-limit.ts';
import { registerAssociationRoutes } from './routes/associations.ts';
import { registerListRoutes, type ContactList } from './routes/lists.ts';
import { registerObjectRoutes } from './routes/objects.ts';
import { registerHubSpotOAuthRoutes } from './routes/oauth.ts';
import { CrmOAuthApp } from '../oauth/crm-app.ts';
import type { Client } from '../oauth/grants.ts';
import { registerOwnerRoutes, type Owner } from './routes/owners.ts';
import { registerPropertyRoutes } from './routes/properties.ts';
import { registerTokenInfoRoute } from './routes/token-info.ts';
import { searchLimits } from './search.ts';
import { dealToContact } from './schema.ts';
import type { EngagementType } from './schema.ts';
import { HubSpotStore, type CrmRecord } from './store.ts';
import { HubSpotWebhooks } from './webhooks.ts';

/**
 * HubSpot's CRM API (v3, as developers.hubspot.com documents it) on loopback, for the CRM sync
 * connector (src/crm/hubspot/): contacts, deals, the notes, emails, calls and tasks engagements
 * (create, batch create, batch read, batch update, search), custom properties, owners, contact
 * lists and their memberships, v4 association reads, token metadata, private-app bearer tokens,
 * the documented rate limits with their 429 bodies and headers, and fault injection. One account
 * ("portal") per emulator; one per test or test file; close() it.
 *
 * Route groups, one file each under routes/: objects, properties, owners, lists, associations and
 * token-info. The order of checks on every request: an outage (503), the token (401), the rate
 * limits (429), a queued fault, then the route.
 *
 * Every write stamps the record's modify date and hs_updated_by_user_id: the token's user through
 * the API, the `by` a test gives for a person's change (updateContact, updateDeal).
 */
export interface HubSpotEmulatorOptions {
  /** Stamps records and drives the rate limits; a SimClock makes both exact. */
  clock?: Clock;
  /** Requests per rolling window per app (private apps on Free/Starter: 100 per 10 s). */
  requestsPerWindow?: number;
  windowMs?: number;
  /** Search requests per rolling second per app (documented 5; default 4, what Cadenza plans for). */
  searchesPerSecond?: number;
  /** A write shows in search results only this long after it was made (documented: "a few moments"; default 0). */
  searchLagMs?: number;
  /** The most results one search query pages through (documented 10,000); smaller to test a client's window moves. */
  searchMaxResults?: number;
  /** Public apps that may ask for consent (routes/oauth.ts); their tokens act as the user 'portal'. */
  oauthClients?: Client[];
  /** An OAuth access token's lifetime (documented 1800 s). */
  accessTokenTtlS?: number;
  /** Waits before a webhook redelivery, and a 'delay' fault's wait (HubSpot's are seconds to minutes; tests need milliseconds). */
  webhookRetryDelaysMs?: number[];
  webhookDelayMs?: number;
}

/** Who made a change, and how long this one takes to reach search (default the emulator's lag). */
export interface ChangeOptions {
  by?: string;
  lagMs?: number;
}

export interface HubSpotEmulator {
  /** In place of https://api.hubapi.com. */
  baseUrl: string;
  /** A test issues the private app's token: `emu.tokens.issue('portal')`; `expire` it for the 401. */
  tokens: TokenRegistry;
  /** The public apps' OAuth (routes/oauth.ts): `denyNext()`, `revokeAll()` (the app uninstalled), `tokenRequests`. */
  oauth: CrmOAuthApp;
  faults: FaultInjector;
  store: HubSpotStore;
  /** Every request, in order, with what it was answered. */
  log: RequestRecord[];
  /** Seeds a contact as if a person had added it in HubSpot; returns its id. */
  addContact(properties: { email: string; firstname?: string; lastname?: string } & Record<string, string>, o?: ChangeOptions): string;
  /** A person's change to a contact in HubSpot (an empty string clears a property). */
  updateContact(id: string, properties: Record<string, string>, o?: ChangeOptions): void;
  /** Seeds a deal associated with the contacts; returns its id. */
  addDeal(properties: { dealname: string; dealstage: string } & Record<string, string>, contactIds: readonly string[], o?: ChangeOptions): string;
  updateDeal(id: string, properties: Record<string, string>, o?: ChangeOptions): void;
  /** Adds an owner (a HubSpot user); returns its owner id. */
  addOwner(o: { email: string; firstName?: string; lastName?: string }): Owner;
  /** Makes a contact list; members added with addToList. */
  addList(name: string, processingType?: 'MANUAL' | 'DYNAMIC'): string;
  addToList(listId: string, contactIds: readonly string[]): void;
  /** The HubSpot user id a token's user (as issued: `tokens.issue(user)`) acts as. */
  userIdOf(user: string): string;
  /** Changes the search lag from now on (writes already made keep theirs). */
  setSearchLag(ms: number): void;
  /** The records of one type, with their properties and associations, in creation order. */
  records(type: EngagementType | 'contacts' | 'deals'): CrmRecord[];
  /** How many requests each route got (route names as for faults), refused ones included. */
  requestCounts(): Record<string, number>;
  /**
   * The most requests any app made in one rolling window, and searches in one rolling second,
   * refused or not; and how many the limits refused. Within the limits: peak ≤ the limit, refused 0.
   */
  rateStats(): { peakPerWindow: number; peakSearchesPerSecond: number; refused: number };
  /** The app's webhooks (webhooks.ts): configure({url, clientSecret}) as the app's admin does; faults; idle(). */
  webhooks: Pick<HubSpotWebhooks, 'configure' | 'inject' | 'deliveries' | 'idle'>;
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
  const oauth = new CrmOAuthApp({ audience: 'hubspot', registry: tokens, clients: opts.oauthClients ?? [], clock, ttlS: opts.accessTokenTtlS ?? 1800, rotates: false, user: () => ({ email: 'portal', sub: 'portal' }) });
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
  store.searchLagMs = opts.searchLagMs ?? 0;
  const webhooks = new HubSpotWebhooks(4_400_001, systemClock, { ...(opts.webhookRetryDelaysMs ? { retryDelaysMs: opts.webhookRetryDelaysMs } : {}), ...(opts.webhookDelayMs !== undefined ? { delayMs: opts.webhookDelayMs } : {}) });
  store.listener = (r, action, properties) => webhooks.changed(r, action, properties);
  // Each app user (a token's user) is a HubSpot user with a numeric id; people's ids come from owners.
  const userIds = new Map<string, string>();
  const userIdOf = (user: string) => {
    const u = user.toLowerCase();
    if (!userIds.has(u)) userIds.set(u, String(9_100_000 + userIds.size + 1));
    return userIds.get(u)!;
  };
  const owners: Owner[] = [];
  const lists: ContactList[] = [];

  const ctx: HubSpotRouteContext = {
    store,
    searchMaxResults: opts.searchMaxResults ?? searchLimits.maxResults,
    userIdOf(req) {
      const t = tokens.check(req.headers.authorization);
      return t.ok ? userIdOf(t.user) : '0';
    },
    run(route, req, reply, handler, o = {}) {
      let headers: Record<string, string> = {};
      const guard = (): EmulatorReply | null => {
        const now = clock.now();
        if (now < outageUntil) return hubspotErrors.unavailable();
        if (o.noAuth) return null;
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
    registerOwnerRoutes(app, ctx, () => owners);
    registerListRoutes(app, ctx, () => lists);
    registerAssociationRoutes(app, ctx);
    registerHubSpotOAuthRoutes(app, ctx, oauth);
    registerTokenInfoRoute(app, ctx, (token) => {
      const t = tokens.check(`Bearer ${token}`);
      return t.ok ? { userId: userIdOf(t.user), hubId: 4_400_001 } : null;
    });
    app.setNotFoundHandler((_req, reply) => reply.code(404).send(hubspotErrors.notFound().body));
  });

  return {
    baseUrl: server.origin,
    tokens,
    oauth,
    faults,
    store,
    log,
    addContact(properties, o = {}) {
      const existing = store.contactByEmail(properties.email);
      if (existing) throw new Error(`addContact: ${properties.email} exists (id ${existing.id})`);
      return store.create('contacts', { ...properties }, [], o).id;
    },
    updateContact(id, properties, o = {}) {
      if (!store.update('contacts', id, properties, o)) throw new Error(`updateContact: no contact ${id}`);
    },
    addDeal(properties, contactIds, o = {}) {
      const associations = contactIds.map((toId) => ({ toObjectType: 'contacts' as const, toId, associationCategory: 'HUBSPOT_DEFINED', associationTypeId: dealToContact }));
      return store.create('deals', { pipeline: 'default', ...properties }, associations, o).id;
    },
    updateDeal(id, properties, o = {}) {
      if (!store.update('deals', id, properties, o)) throw new Error(`updateDeal: no deal ${id}`);
    },
    addOwner(o) {
      const owner: Owner = { id: String(70_000 + owners.length + 1), email: o.email.toLowerCase(), firstName: o.firstName ?? '', lastName: o.lastName ?? '', userId: 8_100_000 + owners.length + 1 };
      owners.push(owner);
      return owner;
    },
    addList(name, processingType = 'MANUAL') {
      const listId = String(lists.length + 1);
      lists.push({ listId, name, processingType, members: [] });
      return listId;
    },
    addToList(listId, contactIds) {
      const list = lists.find((l) => l.listId === listId);
      if (!list) throw new Error(`addToList: no list ${listId}`);
      for (const id of contactIds) if (!list.members.some((m) => m.recordId === id)) list.members.push({ recordId: id, at: clock.now() });
    },
    userIdOf,
    setSearchLag(ms) {
      store.searchLagMs = ms;
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
    webhooks,
    async close() {
      oauth.close();
      await webhooks.close();
      await server.close();
    },
  };
}

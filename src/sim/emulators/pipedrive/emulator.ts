import { systemClock, type Clock } from '../../../common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { TokenRegistry } from '../tokens.ts';
import type { PipedriveRouteContext } from './context.ts';
import { pipedriveErrors } from './errors.ts';
import { BurstWindow, DailyBudget, rateHeaders, tokenCost } from './rate-limit.ts';
import { registerActivityRoutes } from './routes/activities.ts';
import { registerDealRoutes } from './routes/deals.ts';
import { registerMetaRoutes } from './routes/meta.ts';
import { registerPersonRoutes } from './routes/persons.ts';
import { registerPipedriveOAuthRoutes } from './routes/oauth.ts';
import { CrmOAuthApp } from '../oauth/crm-app.ts';
import type { Client } from '../oauth/grants.ts';
import { PipedriveStore, type Activity, type Deal, type Person } from './store.ts';
import { WebhookDispatcher, registerWebhookRoutes, type Delivery, type Webhook, type WebhookFault } from './webhooks.ts';

/**
 * The Pipedrive emulator: one company served over Pipedrive's REST API (API v2 under /api/v2/ for
 * persons, deals, stages and activities; v1 under /v1/ for users, person fields, filters and
 * webhooks), following developers.pipedrive.com. A real HTTP server on loopback; one per test (or
 * per file); close() it.
 *
 * Every request goes through, in order: an outage (503 until the given instant), the token (an
 * API token in `x-api-token`, or an OAuth access token as `Authorization: Bearer`; none or a
 * wrong one → 401 "unauthorized access"), the burst limit of that token per rolling 2 seconds
 * (search endpoints also their own), the company's daily token budget (429s), a queued fault
 * (faults.ts), slow(), then the route. Every answer past the token check carries x-ratelimit-limit,
 * -remaining, -reset and x-daily-requests-left. Time comes from the injected clock.
 */
export interface PipedriveEmulatorOptions {
  clock?: Clock;
  /** Burst limit per API token per 2 s (default 20: Essential plan's documented api_token limit). */
  apiTokenBurst?: number;
  /** Burst limit per OAuth access token per 2 s (default 80: Essential's documented access_token limit). */
  oauthBurst?: number;
  /** Search requests per token per 2 s (documented 10 on every plan). */
  searchBurst?: number;
  /** The company's daily token budget (default 30,000: one seat on the lowest multiplier; unverified). */
  dailyTokens?: number;
  /** The company's users (default one, integration@acme.test); a token is issued for one of them by email. */
  users?: Array<{ name: string; email: string }>;
  /** Waits before a webhook redelivery (Pipedrive waits seconds to minutes; tests need milliseconds). */
  webhookRetryDelaysMs?: number[];
  /** Marketplace apps that may ask for consent (routes/oauth.ts); their tokens act as the first user. */
  oauthClients?: Client[];
  /** An OAuth access token's lifetime (documented 3599 s). */
  accessTokenTtlS?: number;
}

export interface PipedriveEmulator {
  /** 'http://127.0.0.1:PORT', in place of https://<company>.pipedrive.com. */
  baseUrl: string;
  store: PipedriveStore;
  /** Tokens: `tokens.issue(userEmail)` is that user's API token (or OAuth token); `tokens.expire(t)` revokes it. */
  tokens: TokenRegistry;
  /** The Marketplace apps' OAuth (routes/oauth.ts): `denyNext()`, `revokeAll()` (the app uninstalled), `tokenRequests`. */
  oauth: CrmOAuthApp;
  faults: FaultInjector;
  log: RequestRecord[];
  companyId: number;
  /** A user's id by email. */
  userId(email: string): number;
  /** A person, as a user created them in Pipedrive (by the first user); returns the id. */
  addPerson(p: { email: string; name?: string; ownerEmail?: string; jobTitle?: string; phone?: string }): number;
  /** A change a user made in Pipedrive's UI: stamps update_time and fires the webhooks. */
  updatePerson(id: number, change: Partial<Pick<Person, 'name' | 'job_title' | 'marketing_status' | 'label_ids'>>, byEmail?: string): void;
  addStage(name: string, pipelineId?: number): number;
  addDeal(d: { title: string; personId: number | null; stageId: number; status?: Deal['status']; ownerEmail?: string }): number;
  updateDeal(id: number, change: Partial<Pick<Deal, 'title' | 'stage_id' | 'status'>>, byEmail?: string): void;
  /** A people filter (a saved view) with these members. */
  addFilter(name: string, personIds: number[]): number;
  /** Every activity, oldest first. */
  activities(): Activity[];
  /** Custom person field values of a person, by field name. */
  personFieldValues(personId: number): Record<string, unknown>;
  webhooks: { inject(fault: WebhookFault, times?: number): void; deliveries: Delivery[]; idle(): Promise<void>; /** The webhooks registered now. */ registered(): Webhook[] };
  requestCounts(): Record<string, number>;
  /** The most requests that arrived in any 2-s window for one token (and for search), what the limits refused, tokens left today. */
  rateStats(): { peakPerWindow: number; peakSearchesPerWindow: number; refused: number; dailyTokensLeft: number };
  /** Every request answers 503 until the clock reaches `untilMs`. */
  outage(untilMs: number): void;
  /** Each answer waits `ms` of the emulator's clock first. */
  slow(ms: number): void;
  close(): Promise<void>;
}

export const pipedriveDocumentedLimits = { windowMs: 2000, apiTokenBurst: 20, oauthBurst: 80, searchBurst: 10 } as const;

export async function startPipedriveEmulator(opts: PipedriveEmulatorOptions = {}): Promise<PipedriveEmulator> {
  const clock = opts.clock ?? systemClock;
  const store = new PipedriveStore(clock);
  const companyId = 7001;
  for (const u of opts.users ?? [{ name: 'Integration', email: 'integration@acme.test' }]) store.addUser(u.name, u.email);
  const tokens = new TokenRegistry('pd-emu');
  const oauth = new CrmOAuthApp({
    audience: 'pipedrive',
    registry: tokens,
    clients: opts.oauthClients ?? [],
    clock,
    ttlS: opts.accessTokenTtlS ?? 3599,
    rotates: true,
    user: () => ({ email: store.users[0]!.email, sub: String(store.users[0]!.id) }),
  });
  let origin = '';
  const faults = new FaultInjector();
  const log: RequestRecord[] = [];
  const budget = new DailyBudget(opts.dailyTokens ?? 30_000);
  const windows = new Map<string, { burst: BurstWindow; search: BurstWindow }>();
  const windowsOf = (token: string, oauth: boolean) => {
    let w = windows.get(token);
    if (!w) {
      const { windowMs } = pipedriveDocumentedLimits;
      w = {
        burst: new BurstWindow(oauth ? (opts.oauthBurst ?? pipedriveDocumentedLimits.oauthBurst) : (opts.apiTokenBurst ?? pipedriveDocumentedLimits.apiTokenBurst), windowMs),
        search: new BurstWindow(opts.searchBurst ?? pipedriveDocumentedLimits.searchBurst, windowMs),
      };
      windows.set(token, w);
    }
    return w;
  };
  const dispatcher = new WebhookDispatcher(store, companyId, opts.webhookRetryDelaysMs);
  store.listener = dispatcher.onChange;
  let outageUntil = -Infinity;
  let delayMs = 0;

  const ctx: PipedriveRouteContext = {
    store,
    run(route, req, reply, cost, handler) {
      let headers: Record<string, string> = {};
      let userId = 0;
      const guard = (): EmulatorReply | null => {
        const now = clock.now();
        if (now < outageUntil) return pipedriveErrors.unavailable();
        const apiToken = req.headers['x-api-token'];
        const oauth = apiToken === undefined;
        const raw = typeof apiToken === 'string' ? apiToken : (/^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '');
        const t = tokens.check(`Bearer ${raw}`);
        const user = t.ok ? store.users.find((u) => u.email === t.user) : undefined;
        if (!user) return pipedriveErrors.unauthorized();
        userId = user.id;
        const w = windowsOf(raw, oauth);
        const within = w.burst.admit(now);
        const searchWithin = cost.kind !== 'search' || !within || w.search.admit(now);
        const spent = within && searchWithin && budget.spend(tokenCost(cost.api, cost.kind), now);
        headers = rateHeaders(cost.kind === 'search' ? w.search : w.burst, budget, now);
        if (!within || !searchWithin) return pipedriveErrors.tooManyRequests(headers);
        if (!spent) return pipedriveErrors.dailyBudgetSpent(headers);
        return null;
      };
      const decorate = (r: EmulatorReply): EmulatorReply => ({ ...r, headers: { ...headers, ...r.headers } });
      return runRoute({ faults, log }, route, req, reply, guard, async () => {
        if (delayMs > 0) await clock.sleep(delayMs);
        return handler(userId);
      }, decorate);
    },
  };

  const server = await startEmulatorServer((app) => {
    registerPersonRoutes(app, ctx);
    registerDealRoutes(app, ctx);
    registerActivityRoutes(app, ctx);
    registerMetaRoutes(app, ctx, companyId);
    registerWebhookRoutes(app, ctx, dispatcher);
    // oauth.pipedrive.com: no API token, no rate limits of the API.
    registerPipedriveOAuthRoutes(app, (route, req, reply, handler) => runRoute({ faults, log }, route, req, reply, () => null, handler), oauth, () => origin);
    app.setNotFoundHandler((req, reply) => reply.code(404).send(pipedriveErrors.notImplemented(`${req.method} ${req.url.split('?')[0]}`).body));
  });

  origin = server.origin;

  const userId = (email?: string): number => {
    if (email === undefined) return store.users[0]!.id;
    const u = store.users.find((x) => x.email === email.toLowerCase());
    if (!u) throw new Error(`pipedrive emulator: no user ${email}`);
    return u.id;
  };

  return {
    baseUrl: server.origin,
    store,
    tokens,
    oauth,
    faults,
    log,
    companyId,
    userId: (email) => userId(email),
    addPerson(p) {
      const now = store.now();
      const name = p.name ?? p.email.split('@')[0]!;
      const person: Person = {
        id: store.id('person'),
        name,
        first_name: name.split(' ')[0] ?? null,
        last_name: name.split(' ').slice(1).join(' ') || null,
        emails: [{ value: p.email, primary: true, label: 'work' }],
        phones: p.phone ? [{ value: p.phone, primary: true, label: 'work' }] : [],
        owner_id: userId(p.ownerEmail),
        org_id: null,
        label_ids: [],
        job_title: p.jobTitle ?? null,
        marketing_status: 'no_consent',
        add_time: now,
        update_time: now,
        custom_fields: {},
      };
      store.persons.push(person);
      store.touch('person', 'create', person.owner_id, person, null);
      return person.id;
    },
    updatePerson(id, change, byEmail) {
      const p = store.person(id);
      if (!p) throw new Error(`pipedrive emulator: no person ${id}`);
      const previous = structuredClone(p);
      Object.assign(p, change);
      store.touch('person', 'change', userId(byEmail), p, previous);
    },
    addStage(name, pipelineId = 1) {
      const s = { id: store.id('stage'), name, pipeline_id: pipelineId, order_nr: store.stages.length + 1 };
      store.stages.push(s);
      return s.id;
    },
    addDeal(d) {
      const now = store.now();
      const stage = store.stages.find((s) => s.id === d.stageId);
      if (!stage) throw new Error(`pipedrive emulator: no stage ${d.stageId}`);
      const deal: Deal = { id: store.id('deal'), title: d.title, person_id: d.personId, stage_id: stage.id, pipeline_id: stage.pipeline_id, status: d.status ?? 'open', owner_id: userId(d.ownerEmail), add_time: now, update_time: now };
      store.deals.push(deal);
      store.touch('deal', 'create', deal.owner_id, deal, null);
      return deal.id;
    },
    updateDeal(id, change, byEmail) {
      const d = store.deals.find((x) => x.id === id);
      if (!d) throw new Error(`pipedrive emulator: no deal ${id}`);
      const previous = structuredClone(d);
      Object.assign(d, change);
      store.touch('deal', 'change', userId(byEmail), d, previous);
    },
    addFilter(name, personIds) {
      const f = { id: store.id('filter'), name, personIds };
      store.filters.push(f);
      return f.id;
    },
    activities: () => [...store.activities],
    personFieldValues(personId) {
      const p = store.person(personId);
      if (!p) throw new Error(`pipedrive emulator: no person ${personId}`);
      return Object.fromEntries(Object.entries(p.custom_fields).map(([k, v]) => [store.personFieldByKey(k)!.name, v]));
    },
    webhooks: { inject: (f, n) => dispatcher.inject(f, n), deliveries: dispatcher.deliveries, idle: () => dispatcher.idle(), registered: () => [...dispatcher.hooks] },
    requestCounts() {
      const out: Record<string, number> = {};
      for (const r of log) out[r.route] = (out[r.route] ?? 0) + 1;
      return out;
    },
    rateStats() {
      const all = [...windows.values()];
      return {
        peakPerWindow: Math.max(0, ...all.map((w) => w.burst.peak)),
        peakSearchesPerWindow: Math.max(0, ...all.map((w) => w.search.peak)),
        refused: all.reduce((n, w) => n + w.burst.refused + w.search.refused, 0) + budget.refused,
        dailyTokensLeft: budget.left(clock.now()),
      };
    },
    outage(untilMs) {
      outageUntil = untilMs;
    },
    slow(ms) {
      delayMs = ms;
    },
    async close() {
      oauth.close();
      await dispatcher.close();
      await server.close();
    },
  };
}

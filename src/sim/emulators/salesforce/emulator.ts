import { systemClock, type Clock } from '../../../common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { ApiAllocation } from './api-limit.ts';
import { cdcEntities, ChangeEventLog, type ChangeEvent, type ChangeType } from './change-events.ts';
import type { SalesforceRouteContext } from './context.ts';
import { sfErrors } from './errors.ts';
import { registerCometdRoutes } from './routes/cometd.ts';
import { registerListViewRoutes } from './routes/listviews.ts';
import { registerOAuthRoutes } from './routes/oauth.ts';
import { registerQueryRoutes } from './routes/query.ts';
import { registerSObjectRoutes } from './routes/sobjects.ts';
import type { FieldDef, SObjectName } from './schema.ts';
import { Sessions } from './sessions.ts';
import { SalesforceStore, type SRecord } from './store.ts';

/**
 * One Salesforce org's REST API (as developer.salesforce.com documents it, v46.0–v62.0) on
 * loopback, for the CRM connector (src/crm/salesforce/): the OAuth refresh-token flow and revoke
 * on the org's host, SOQL queries (the subset in soql.ts) with nextRecordsUrl paging, describe,
 * record update, sObject Collections upsert by external id, Contact list views, the rolling 24-hour
 * API allocation with its Sforce-Limit-Info header, Change Data Capture over the Streaming API's
 * CometD endpoint (change-events.ts, routes/cometd.ts; when the org enables it), and fault injection. The base URL is the org's
 * instance URL (https://MyDomain.my.salesforce.com in an org). One org per emulator; close() it.
 *
 * The order of checks on every /services/data request: an outage (503), the session (401
 * INVALID_SESSION_ID), the API allocation (403 REQUEST_LIMIT_EXCEEDED), a queued fault, the route.
 */
export interface SalesforceEmulatorOptions {
  /** Stamps records (SystemModstamp), ends sessions and ages the API allocation; a SimClock makes all three exact. */
  clock?: Clock;
  /** The org's API calls per rolling 24 h (default 100,000: Enterprise Edition's base allocation). */
  dailyApiLimit?: number;
  /** How long an access token lives (default 2 h, Salesforce's default session timeout). */
  sessionTtlMs?: number;
  /** Rows per query answer before nextRecordsUrl (default 2000, Salesforce's default batch). */
  queryBatchSize?: number;
  /**
   * Change Data Capture: the entities an admin selected (true: Contact, Lead, Opportunity,
   * OpportunityContactRole). Default off: the org's subscribers get "channel does not exist".
   */
  changeDataCapture?: boolean | { entities: SObjectName[] };
  /** Events in one CometD connect answer at most (default 100; Salesforce's batch size is not documented). */
  eventsPerConnect?: number;
  /** The connected app's callback URLs (routes/oauth.ts authorize); none: the web server flow is refused. */
  callbackUrls?: string[];
}

export interface SalesforceEmulator {
  /** The org's instance URL, in place of https://MyDomain.my.salesforce.com. */
  baseUrl: string;
  /** The connected app (consumer key and secret) Cadenza is registered as. */
  client: { id: string; secret: string; callbackUrls: readonly string[] };
  /** The admin declines on the next consent page (the web server flow, routes/oauth.ts). */
  denyNext(error?: string): void;
  /** The user the connection acts as (an integration user), and the org's id. */
  integrationUserId: string;
  orgId: string;
  store: SalesforceStore;
  faults: FaultInjector;
  log: RequestRecord[];
  /** What an admin's consent to the connected app leaves: a refresh token for `userId` (default the integration user). */
  authorize(userId?: string): string;
  /** Ends every access token now (a session timeout): the next API call gets 401, a refresh gives a new one. */
  expireSessions(): void;
  /** Revokes a refresh token (its grant and sessions) or one access token, as POST /services/oauth2/revoke does. */
  revoke(token: string): void;
  addUser(u: { email: string; name?: string; alias?: string }): string;
  addAccount(name: string): string;
  /** Seeds a record as a person would make it in Salesforce (default: by an admin user, not the integration user). */
  add(object: Exclude<SObjectName, 'User'>, fields: Record<string, unknown>, by?: string): string;
  /** Changes a record as a person would (bumps SystemModstamp, LastModifiedById = `by`). */
  update(object: Exclude<SObjectName, 'User'>, id: string, fields: Record<string, unknown>, by?: string): void;
  /** Deletes a record as a person would: to the Recycle Bin (queryAll finds it for 15 days). */
  remove(object: Exclude<SObjectName, 'User'>, id: string, by?: string): void;
  /** Adds a custom field as an admin would in Setup (Task custom fields are Activity fields in an org). */
  addCustomField(object: SObjectName, def: Pick<FieldDef, 'name' | 'type'> & Partial<FieldDef>): void;
  /** Adds a Contact list view whose members `filter` picks; returns its id (00B…). */
  addListView(v: { label: string; developerName: string; filter: (c: SRecord) => boolean }): string;
  /** Adds a validation rule: `check` sees the record as it would be saved and answers an error message, or null to let it pass. */
  addValidationRule(object: SObjectName, check: (r: Record<string, unknown>) => string | null): void;
  records(object: SObjectName): SRecord[];
  /** Calls counted in the rolling 24 h, the allocation, and calls refused for it. */
  apiUsage(): { used: number; max: number; refused: number };
  /** The most calls this emulator counted within any `windowMs` (e.g. an hour, the connector's window). */
  apiPeak(windowMs: number): number;
  /** Counts `n` calls by other integrations of the org, now (to bring the allocation near its end). */
  spendApi(n: number): void;
  /** How many requests each route got (route names as for faults), refused ones included. */
  requestCounts(): Record<string, number>;
  /** Answers every request 503 until the clock reaches `untilMs`. */
  outage(untilMs: number): void;
  /** Delays every answer by `ms` of the emulator's clock before processing (0: none). */
  slow(ms: number): void;
  /** The change events kept on the bus now (72 h on the emulator's clock), oldest first. */
  changeEvents(): ChangeEvent[];
  /**
   * Changes a record as `update` does but without its change event: a GAP event (`type`, default
   * GAP_UPDATE) stands for it, as when Salesforce cannot build the event. GAP_OVERFLOW carries no ids.
   */
  updateWithGap(object: Exclude<SObjectName, 'User'>, ids: string[], fields: Record<string, unknown>, type?: Extract<ChangeType, `GAP_${string}`>, by?: string): void;
  /** The next `times` CometD connect answers that carry events carry each twice (Salesforce may deliver an event more than once). */
  duplicateEvents(times?: number): void;
  close(): Promise<void>;
}

export async function startSalesforceEmulator(opts: SalesforceEmulatorOptions = {}): Promise<SalesforceEmulator> {
  const clock = opts.clock ?? systemClock;
  const orgId = '00D5g000004EMUL';
  const store = new SalesforceStore(clock, `${orgId}EAA`);
  const cdc = opts.changeDataCapture === true ? cdcEntities : opts.changeDataCapture ? opts.changeDataCapture.entities : [];
  const bus = new ChangeEventLog(clock, new Set(cdc));
  store.onWrite = (w) => bus.record(w);
  let duplicates = 0;
  const sessions = new Sessions(store.orgId, opts.sessionTtlMs ?? 2 * 3_600_000);
  const allocation = new ApiAllocation(opts.dailyApiLimit ?? 100_000);
  const faults = new FaultInjector();
  const log: RequestRecord[] = [];
  const client = { id: '3MVG9emulatorConsumerKey', secret: 'emulator-consumer-secret', callbackUrls: opts.callbackUrls ?? [] };
  const denials: string[] = [];
  let origin = '';
  let outageUntil = -Infinity;
  let delayMs = 0;

  const admin = store.create('User', { Username: 'admin@acme.test', Email: 'admin@acme.test', Name: 'Org Admin', Alias: 'admin' }, 'system').Id;
  const integrationUserId = store.create('User', { Username: 'cadenza@acme.test', Email: 'cadenza@acme.test', Name: 'Cadenza Integration', Alias: 'cadenza' }, admin).Id;

  const slowly = async <T>(fn: () => T | Promise<T>): Promise<T> => {
    if (delayMs > 0) await clock.sleep(delayMs);
    return fn();
  };

  const ctx: SalesforceRouteContext = {
    store,
    clock,
    queryBatchSize: opts.queryBatchSize ?? 2000,
    run(route, req, reply, handler) {
      let userId = '';
      let counted = false;
      const guard = (): EmulatorReply | null => {
        const now = clock.now();
        if (now < outageUntil) return sfErrors.unavailable();
        const s = sessions.check(req.headers.authorization, now);
        if (!s.ok) return sfErrors.invalidSession();
        userId = s.userId;
        counted = true;
        return allocation.admit(now) ? null : sfErrors.requestLimitExceeded();
      };
      // Every answer to an authenticated call says where the allocation stands (documented header).
      const decorate = (r: EmulatorReply): EmulatorReply => (counted ? { ...r, headers: { ...allocation.header(clock.now()), ...r.headers } } : r);
      return runRoute({ faults, log }, route, req, reply, guard, () => slowly(() => handler(userId)), decorate);
    },
  };

  const server = await startEmulatorServer((app) => {
    registerOAuthRoutes(app, {
      store,
      sessions,
      clients: [client],
      consentingUserId: integrationUserId,
      denials,
      now: () => clock.now(),
      origin: () => origin,
      run: (route, req, reply, handler) => runRoute({ faults, log }, route, req, reply, () => (clock.now() < outageUntil ? sfErrors.unavailable() : null), () => slowly(handler)),
    });
    registerQueryRoutes(app, ctx);
    registerSObjectRoutes(app, ctx);
    registerListViewRoutes(app, ctx);
    registerCometdRoutes(app, {
      bus,
      clock,
      eventsPerConnect: opts.eventsPerConnect ?? 100,
      takeDuplicate: () => duplicates > 0 && duplicates-- > 0,
      run: (route, req, reply, handler) => {
        let userId = '';
        const guard = (): EmulatorReply | null => {
          if (clock.now() < outageUntil) return sfErrors.unavailable();
          const s = sessions.check(req.headers.authorization, clock.now());
          if (!s.ok) return { status: 401, body: [{ channel: '/meta/handshake', successful: false, error: '401::Authentication invalid', advice: { reconnect: 'none' } }] };
          userId = s.userId;
          return null;
        };
        return runRoute({ faults, log }, route, req, reply, guard, () => slowly(() => handler(userId)));
      },
    });
    app.setNotFoundHandler((_req, reply) => reply.code(404).send(sfErrors.notFound().body));
  });
  origin = server.origin;

  return {
    baseUrl: server.origin,
    client,
    integrationUserId,
    orgId: store.orgId,
    store,
    faults,
    log,
    authorize: (userId = integrationUserId) => sessions.grant(client.id, userId),
    denyNext: (error = 'access_denied') => void denials.push(error),
    expireSessions: () => sessions.expireAll(),
    revoke(token) {
      if (!sessions.revoke(token)) throw new Error('revoke: unknown token');
    },
    addUser: (u) => store.create('User', { Username: u.email, Email: u.email, Name: u.name ?? u.email, Alias: u.alias ?? u.email.slice(0, 8) }, admin).Id,
    addAccount: (name) => store.create('Account', { Name: name }, admin).Id,
    add: (object, fields, by = admin) => store.create(object, fields, by).Id,
    update(object, id, fields, by = admin) {
      store.update(object, id, fields, by);
    },
    remove(object, id, by = admin) {
      store.remove(object, id, by);
    },
    addCustomField(object, def) {
      store.schema.addCustom(object, def);
      for (const r of store.all(object)) if (!(def.name in r)) r[def.name] = null;
    },
    addListView(v) {
      const id = store.newId('00B');
      store.listViews.push({ id, sobjectType: 'Contact', ...v });
      return id;
    },
    addValidationRule(object, check) {
      store.validationRules.push({ object, check });
    },
    records: (object) => store.all(object),
    apiUsage: () => ({ used: allocation.used(clock.now()), max: allocation.max, refused: allocation.refused }),
    apiPeak: (windowMs) => allocation.peak(windowMs),
    spendApi: (n) => allocation.spend(n, clock.now()),
    requestCounts() {
      const out: Record<string, number> = {};
      for (const r of log) out[r.route] = (out[r.route] ?? 0) + 1;
      return out;
    },
    outage(untilMs) {
      outageUntil = untilMs;
    },
    slow(ms) {
      delayMs = ms;
    },
    changeEvents: () => [...bus.retained()],
    updateWithGap(object, ids, fields, type = 'GAP_UPDATE', by = admin) {
      bus.silent = true;
      try {
        for (const id of ids) store.update(object, id, fields, by);
      } finally {
        bus.silent = false;
      }
      bus.gap(object, ids, type, by);
    },
    duplicateEvents(times = 1) {
      duplicates += times;
    },
    close: server.close,
  };
}

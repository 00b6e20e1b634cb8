import { systemClock, type Clock } from '../../../common/clock.ts';
import { FaultInjector } from '../faults.ts';
import { runRoute, startEmulatorServer, type EmulatorReply, type RequestRecord } from '../server.ts';
import { TokenRegistry } from '../tokens.ts';
import type { TwentyRouteContext } from './context.ts';
import { apiKeyActor, memberActor, type Actor } from './actor.ts';
import { twentyErrors } from './errors.ts';
import { RateLimiter, type RateLimit } from './rate-limit.ts';
import type { StoredRecord } from './record-input.ts';
import { registerMetadataRoutes } from './routes/metadata.ts';
import { registerRecordRoutes } from './routes/records.ts';
import { registerViewRoutes } from './routes/views.ts';
import { TwentyStore } from './store.ts';
import type { ViewFilterOperand } from './views.ts';

/**
 * The Twenty CRM emulator: one workspace served over Twenty's REST API (`/rest/…` for records,
 * `/rest/metadata/…` for the data model), following docs.twenty.com and, where the docs are
 * silent, twenty-server's REST handlers and integration tests. A real HTTP server on loopback;
 * one per test (or per file); close() it.
 *
 * Every request goes through, in order: an outage (503 until the given instant), the API key
 * (Bearer; none → 403, unknown → 401, expired → 401), the workspace's rate limit (429), a queued
 * fault (faults.ts), then the route: records (routes/records.ts), metadata (routes/metadata.ts)
 * and views (routes/views.ts). Time comes from the injected clock.
 *
 * An API key's writes are stamped with the actor {source: 'API', name: <the key's name>}; the
 * key's name here is the user it was issued for (`tokens.issue('Cadenza')`, lowercased by the
 * registry). The helpers below stand for what people do in Twenty's app: they write as a
 * workspace member (source MANUAL) when given one (`by`), else as an unnamed MANUAL actor.
 */
export interface TwentyEmulatorOptions {
  clock?: Clock;
  /** Requests per window (default: the documented 100 per minute); null: no limit. */
  rateLimit?: RateLimit | null;
  /** A list's default and largest page (default 60 and 60: the limit Twenty's OpenAPI has shown; unverified for newer versions). */
  pageSize?: { default: number; max: number };
  /** Records per /rest/batch create (default: the documented 60). */
  batchMax?: number;
}

export interface TwentyActivityRecord {
  object: 'note' | 'task';
  record: StoredRecord;
  /** Its noteTargets / taskTargets. */
  targets: StoredRecord[];
}

export interface TwentyEmulator {
  /** 'http://127.0.0.1:PORT', in place of https://api.twenty.com (or a self-hosted server's URL). */
  baseUrl: string;
  store: TwentyStore;
  /** API keys: `tokens.issue('workspace')` is one; `tokens.expire(key)` revokes it. */
  tokens: TokenRegistry;
  faults: FaultInjector;
  /** Every request, in order, with what it got. */
  requests: RequestRecord[];
  /** A person, as a user would have created them in Twenty; returns its id. */
  addPerson(p: { email: string; firstName?: string; lastName?: string; jobTitle?: string; phone?: string; companyId?: string; by?: string }): string;
  /** A workspace member (a user of the workspace); returns its id. */
  addMember(m: { email: string; firstName?: string; lastName?: string }): string;
  addCompany(c: { name: string; accountOwnerId?: string; by?: string }): string;
  addOpportunity(o: { name: string; stage?: string; pointOfContactId?: string; companyId?: string; ownerId?: string; amountMicros?: number; by?: string }): string;
  /** A change made in the app: the fields given, updatedAt now, updatedBy the member `by` (or an unnamed one). */
  edit(plural: string, id: string, patch: Record<string, unknown>, by?: string): void;
  /** A delete in the app: soft (the record goes to the trash, deletedAt set). */
  trash(plural: string, id: string): void;
  /** A saved view on an object, with its filters naming fields by name (their metadata ids are looked up). */
  addView(v: { name: string; object: string; filters: Array<{ field: string; operand: ViewFilterOperand; value: unknown; subFieldName?: string; viewFilterGroupId?: string }> }): string;
  /** Every note and task with its targets, oldest first. */
  activities(): TwentyActivityRecord[];
  /** For a soak test: requests per route name, and the most requests accepted within any rate window. */
  stats(): { requestsByRoute: Record<string, number>; highestInWindow: number };
  /** Every request answers 503 until the clock reaches `untilMs`. */
  outage(untilMs: number): void;
  close(): Promise<void>;
}

/** Documented for Twenty's API: 100 requests per minute, batches of 60 records. */
export const twentyDocumentedLimits = { rateLimit: { requests: 100, windowMs: 60_000 }, batchMax: 60 } as const;

export async function startTwentyEmulator(opts: TwentyEmulatorOptions = {}): Promise<TwentyEmulator> {
  const clock = opts.clock ?? systemClock;
  const store = new TwentyStore(clock);
  const tokens = new TokenRegistry('twenty.emu.apikey');
  const faults = new FaultInjector();
  const log: RequestRecord[] = [];
  const limit = opts.rateLimit === undefined ? twentyDocumentedLimits.rateLimit : opts.rateLimit;
  const limiter = new RateLimiter(limit, clock.now());
  let downUntil = -Infinity;

  const ctx: TwentyRouteContext = {
    store,
    pageSize: opts.pageSize ?? { default: 60, max: 60 },
    batchMax: opts.batchMax ?? twentyDocumentedLimits.batchMax,
    run(route, req, reply, handler) {
      const guard = (): EmulatorReply | null => {
        if (clock.now() < downUntil) return twentyErrors.serviceUnavailable();
        if (!req.headers.authorization) return twentyErrors.missingToken();
        const t = tokens.check(req.headers.authorization);
        if (!t.ok) return t.why === 'expired' ? twentyErrors.expiredToken() : twentyErrors.invalidToken();
        if (!limiter.take(clock.now())) return twentyErrors.tooManyRequests(limit!.requests, limit!.windowMs);
        return null;
      };
      const actor = () => {
        const t = tokens.check(req.headers.authorization);
        return apiKeyActor(t.ok ? t.user : '');
      };
      return runRoute({ faults, log }, route, req, reply, guard, () => handler(actor()));
    },
  };

  const actorOf = (memberId?: string): Actor => {
    if (memberId === undefined) return { source: 'MANUAL', workspaceMemberId: null, name: '', context: {} };
    const m = store.get('workspaceMembers', memberId);
    if (!m) throw new Error(`twenty emulator: no workspace member ${memberId}`);
    return memberActor(m);
  };
  const seed = (plural: string, input: Record<string, unknown>, by?: string): string => {
    const r = store.create(plural, [input], actorOf(by));
    if (!r.ok) throw new Error(`twenty emulator: add to ${plural}: ${r.message}`);
    return r.records[0]!.id;
  };

  const server = await startEmulatorServer((app) => {
    registerMetadataRoutes(app, ctx);
    registerViewRoutes(app, ctx);
    registerRecordRoutes(app, ctx);
    app.setNotFoundHandler((req, reply) => reply.code(404).send(twentyErrors.notImplemented(`${req.method} ${req.url.split('?')[0]}`).body));
  });

  return {
    baseUrl: server.origin,
    store,
    tokens,
    faults,
    requests: log,
    addPerson(p) {
      return seed('people', {
        emails: { primaryEmail: p.email },
        name: { firstName: p.firstName ?? '', lastName: p.lastName ?? '' },
        ...(p.jobTitle !== undefined ? { jobTitle: p.jobTitle } : {}),
        ...(p.phone !== undefined ? { phones: { primaryPhoneNumber: p.phone } } : {}),
        ...(p.companyId !== undefined ? { companyId: p.companyId } : {}),
      }, p.by);
    },
    addMember(m) {
      return seed('workspaceMembers', { userEmail: m.email.toLowerCase(), name: { firstName: m.firstName ?? '', lastName: m.lastName ?? '' } });
    },
    addCompany(c) {
      return seed('companies', { name: c.name, ...(c.accountOwnerId ? { accountOwnerId: c.accountOwnerId } : {}) }, c.by);
    },
    addOpportunity(o) {
      const { by, amountMicros, ...rest } = o;
      return seed('opportunities', { ...rest, ...(amountMicros !== undefined ? { amount: { amountMicros, currencyCode: 'USD' } } : {}) }, by);
    },
    edit(plural, id, patch, by) {
      const r = store.update(plural, id, patch, actorOf(by));
      if (!r.ok) throw new Error(`twenty emulator: edit ${plural} ${id}: ${r.message}`);
    },
    trash(plural, id) {
      if (!store.remove(plural, id, true)) throw new Error(`twenty emulator: trash ${plural} ${id}: no such live record`);
    },
    addView(v) {
      const obj = store.objects.get(v.object);
      if (!obj) throw new Error(`twenty emulator: addView: no object ${v.object}`);
      const filters = v.filters.map(({ field, ...f }) => {
        const def = obj.fields.get(field);
        if (!def?.id) throw new Error(`twenty emulator: addView: ${v.object} has no field ${field}`);
        return { ...f, fieldMetadataId: def.id };
      });
      return store.views.add({ name: v.name, objectMetadataId: obj.id }, filters).id;
    },
    activities() {
      const of = (object: 'note' | 'task'): TwentyActivityRecord[] => {
        const targets = store.records(`${object}Targets`);
        return store.records(`${object}s`).map((record) => ({ object, record, targets: targets.filter((t) => t[`${object}Id`] === record.id) }));
      };
      return [...of('note'), ...of('task')].sort((a, b) => (a.record.id < b.record.id ? -1 : 1));
    },
    stats() {
      const requestsByRoute: Record<string, number> = {};
      for (const r of log) requestsByRoute[r.route] = (requestsByRoute[r.route] ?? 0) + 1;
      return { requestsByRoute, highestInWindow: limiter.highestInWindow };
    },
    outage(untilMs) {
      downUntil = untilMs;
    },
    close: server.close,
  };
}

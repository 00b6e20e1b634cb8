import { systemClock, type Clock } from '../../common/clock.ts';
import { parseRetryAfter } from '../../mailbox/providers/retry-after.ts';
import { CrmAuthError, CrmTransientError } from '../connector.ts';

/**
 * Twenty's REST API over plain fetch: an API key as Bearer token, one deadline per request, and
 * every answer sorted into what the connector tells apart:
 *
 *   2xx                         the JSON body
 *   401, 403                    CrmAuthError (Twenty: 401 "Token invalid." / "Token has expired.",
 *                               403 without a token or for a role that may not do this)
 *   429, 5xx, 408               CrmTransientError, with Retry-After when the answer has one
 *                               (Twenty's throttler sets none, so a 429 without it waits
 *                               `retryAfterFallbackMs`)
 *   no answer, a timeout,
 *   an unreadable 2xx body      CrmTransientError (the request may have been acted on; the
 *                               connector finds what was written by its externalId)
 *   other 4xx                   TwentyRefusal with Twenty's message (its error body:
 *                               {statusCode, error, messages: [...]})
 */
export interface TwentyClientOptions {
  /** https://api.twenty.com for Twenty Cloud, a self-hosted server's URL, or an emulator's. */
  baseUrl: string;
  /** The workspace's API key (Settings → APIs & Webhooks). */
  apiKey: () => string | Promise<string>;
  /** Deadline of one request, connection to last byte (default 30 s). */
  timeoutMs?: number;
  clock?: Clock;
  /** The wait a 429 without Retry-After asks for. */
  retryAfterFallbackMs: number;
}

/** Twenty refused this request for good (a 4xx other than 401/403/408/429): asking again gets the same. */
export class TwentyRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'TwentyRefusal';
  }
}

export interface Page {
  records: Array<Record<string, unknown> & { id: string }>;
  pageInfo: { hasNextPage?: boolean; endCursor?: string | null } | undefined;
}

/** Twenty's list page size as its OpenAPI has documented it (limit: default and maximum 60). */
export const listPageSize = 60;
/** A list longer than this many pages is not what the connector asks for: it stops rather than loop. */
const maxPages = 20;

export class TwentyClient {
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly base: string;

  constructor(private readonly opts: TwentyClientOptions) {
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.base = opts.baseUrl.replace(/\/+$/, '');
  }

  /** Every record of `plural` matching `filter`, page by page (depth 0: the records' own fields). */
  async listAll(plural: string, filter: string): Promise<Page['records']> {
    const out: Page['records'] = [];
    let after: string | undefined;
    for (let i = 0; i < maxPages; i++) {
      const query: Record<string, string> = { filter, limit: String(listPageSize), depth: '0' };
      if (after) query.starting_after = after;
      const body = await this.request('GET', `/rest/${plural}`, query);
      const records = (body as { data?: Record<string, unknown> })?.data?.[plural];
      if (!Array.isArray(records)) throw new CrmTransientError(`Twenty: the ${plural} list answer has no data.${plural}`);
      out.push(...(records as Page['records']));
      const info = (body as { pageInfo?: Page['pageInfo'] }).pageInfo;
      if (!info?.hasNextPage || !info.endCursor) return out;
      after = info.endCursor;
    }
    throw new CrmTransientError(`Twenty: more than ${maxPages} pages of ${plural} for ${filter}`);
  }

  /**
   * One page of a list: GET /rest/<plural> with `filter`, `order_by` and `starting_after` when
   * given, at depth 0. Twenty's answer: {data: {<plural>: [...]}, pageInfo: {hasNextPage, endCursor}}.
   */
  async listPage(plural: string, q: { filter?: string; orderBy?: string; limit: number; after?: string | null }): Promise<{ records: Page['records']; hasNextPage: boolean; endCursor: string | null }> {
    const query: Record<string, string> = { limit: String(q.limit), depth: '0' };
    if (q.filter) query.filter = q.filter;
    if (q.orderBy) query.order_by = q.orderBy;
    if (q.after) query.starting_after = q.after;
    const body = await this.request('GET', `/rest/${plural}`, query);
    const records = (body as { data?: Record<string, unknown> })?.data?.[plural];
    if (!Array.isArray(records)) throw new CrmTransientError(`Twenty: the ${plural} list answer has no data.${plural}`);
    const info = (body as { pageInfo?: Page['pageInfo'] }).pageInfo;
    return { records: records as Page['records'], hasNextPage: info?.hasNextPage === true, endCursor: info?.endCursor ?? null };
  }

  /** POST /rest/batch/<plural>: the created records (answer: {data: {create<Plural>: [...]}}). */
  async createMany(plural: string, inputs: readonly Record<string, unknown>[]): Promise<Page['records']> {
    const created = firstDataValue(await this.request('POST', `/rest/batch/${plural}`, {}, inputs));
    if (!Array.isArray(created)) throw new CrmTransientError(`Twenty: the batch create of ${plural} answered no records`);
    return created as Page['records'];
  }

  /** POST /rest/<plural>: the created record (answer: {data: {create<Singular>: {...}}}). */
  async createOne(plural: string, input: Record<string, unknown>): Promise<{ id: string }> {
    const created = firstDataValue(await this.request('POST', `/rest/${plural}`, {}, input)) as { id?: unknown } | undefined;
    if (typeof created?.id !== 'string') throw new CrmTransientError(`Twenty: the create of a ${plural} record answered no id`);
    return { id: created.id };
  }

  async request(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, query: Record<string, string> = {}, body?: unknown): Promise<unknown> {
    const url = new URL(this.base + path);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const key = await this.opts.apiKey();
    const ac = new AbortController();
    const timer = this.clock.setTimer(this.timeoutMs, () => ac.abort());
    let status: number;
    let headers: Headers;
    let text: string;
    try {
      const res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${key}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: ac.signal,
      });
      status = res.status;
      headers = res.headers;
      text = await res.text();
    } catch (e) {
      const why = ac.signal.aborted ? `no answer within ${this.timeoutMs} ms` : (e as Error).message;
      throw new CrmTransientError(`Twenty ${method} ${path}: ${why}`);
    } finally {
      timer.cancel();
    }
    if (status >= 200 && status < 300) {
      try {
        return text === '' ? undefined : JSON.parse(text);
      } catch {
        throw new CrmTransientError(`Twenty ${method} ${path}: ${status} with a body that is not JSON`);
      }
    }
    const message = `Twenty ${method} ${path}: ${status} ${errorMessage(text)}`;
    if (status === 401 || status === 403) throw new CrmAuthError(message);
    if (status === 429 || status === 408 || status >= 500) {
      const asked = parseRetryAfter(headers.get('retry-after'), this.clock.now());
      throw new CrmTransientError(message, asked ?? (status === 429 ? this.opts.retryAfterFallbackMs : undefined));
    }
    throw new TwentyRefusal(status, errorMessage(text));
  }
}

/** Twenty's error text: the first of `messages`, else `message`, else the start of the body. */
function errorMessage(text: string): string {
  try {
    const b = JSON.parse(text) as { messages?: unknown; message?: unknown };
    if (Array.isArray(b.messages) && typeof b.messages[0] === 'string') return b.messages[0];
    if (typeof b.message === 'string') return b.message;
  } catch {
    // not JSON: a proxy's page
  }
  return text.slice(0, 200);
}

/** `data`'s one value: create answers name it after the operation (createNote, createNotes, createOneField). */
export function firstDataValue(body: unknown): unknown {
  const data = (body as { data?: unknown } | undefined)?.data;
  return data && typeof data === 'object' && !Array.isArray(data) ? Object.values(data)[0] : data;
}

/**
 * `path[in]:["v1","v2"]`. Twenty splits the list at every comma and drops one pair of quotes per
 * value (filter-parser-utils/format-field-values.util.ts), so a value may hold neither a comma nor
 * a double quote; parentheses and brackets would upset its predicate splitter. Callers check
 * `filterable` first.
 */
export function inFilter(path: string, values: readonly string[]): string {
  return `${path}[in]:[${values.map((v) => `"${v}"`).join(',')}]`;
}

export function filterable(value: string): boolean {
  return value !== '' && !/[",()[\]]/.test(value);
}

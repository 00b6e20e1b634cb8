import { systemClock, type Clock } from '../../common/clock.ts';
import { parseRetryAfter } from '../../mailbox/providers/retry-after.ts';
import { CrmAuthError, CrmTransientError } from '../connector.ts';

/**
 * Pipedrive's REST API over plain fetch: the token in `x-api-token` (an API token, the
 * documented header) or as `Authorization: Bearer` (an OAuth access token), one deadline per
 * request, and every answer sorted into what the connector tells apart:
 *
 *   2xx                        the JSON body
 *   401, 403                   CrmAuthError ("unauthorized access": a wrong, regenerated or revoked
 *                              token; 403: the user may not do this)
 *   429                        CrmTransientError, waiting: Retry-After when sent; else, when the
 *                              daily token budget is spent (x-daily-requests-left: 0, or the burst
 *                              window has room: x-ratelimit-remaining > 0), until the
 *                              next UTC midnight (the budget resets "at the start of the next day";
 *                              that the day is UTC's is unverified); else x-ratelimit-reset seconds
 *                              (the 2-second burst window)
 *   5xx, 408                   CrmTransientError, after Retry-After when sent
 *   no answer, a timeout,
 *   a 2xx that is not JSON     CrmTransientError (the request may have been acted on)
 *   other 4xx                  PipedriveRefusal with Pipedrive's `error` text
 *
 * The token goes only into a header, never into an error's message.
 */
export interface PipedriveClientOptions {
  /** https://<company>.pipedrive.com (or https://api.pipedrive.com), or an emulator's. */
  baseUrl: string;
  token: () => string | Promise<string>;
  /** 'api_token' (default): x-api-token; 'oauth': Authorization: Bearer. */
  auth?: 'api_token' | 'oauth';
  /** Deadline of one request, connection to last byte (default 30 s). */
  timeoutMs?: number;
  clock?: Clock;
}

/** Pipedrive refused this request for good (a 4xx other than 401/403/408/429): asking again gets the same. */
export class PipedriveRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'PipedriveRefusal';
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export class PipedriveClient {
  readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly base: string;

  constructor(private readonly opts: PipedriveClientOptions) {
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.base = opts.baseUrl.replace(/\/+$/, '');
  }

  get(path: string, query: Query = {}): Promise<any> {
    return this.request('GET', path, query);
  }

  post(path: string, body: unknown): Promise<any> {
    return this.request('POST', path, {}, body);
  }

  patch(path: string, body: unknown): Promise<any> {
    return this.request('PATCH', path, {}, body);
  }

  delete(path: string): Promise<any> {
    return this.request('DELETE', path);
  }

  async request(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, query: Query = {}, body?: unknown): Promise<any> {
    const url = new URL(this.base + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    const token = await this.opts.token();
    const headers: Record<string, string> = this.opts.auth === 'oauth' ? { authorization: `Bearer ${token}` } : { 'x-api-token': token };
    headers.accept = 'application/json';
    if (body !== undefined) headers['content-type'] = 'application/json';
    const ac = new AbortController();
    const timer = this.clock.setTimer(this.timeoutMs, () => ac.abort());
    let status: number;
    let answerHeaders: Headers;
    let text: string;
    try {
      const res = await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: ac.signal,
      });
      status = res.status;
      answerHeaders = res.headers;
      text = await res.text();
    } catch (e) {
      const why = ac.signal.aborted ? `no answer within ${this.timeoutMs} ms` : causeOf(e);
      throw new CrmTransientError(`Pipedrive ${method} ${path}: ${why}`);
    } finally {
      timer.cancel();
    }
    if (status >= 200 && status < 300) {
      try {
        return text === '' ? undefined : JSON.parse(text);
      } catch {
        throw new CrmTransientError(`Pipedrive ${method} ${path}: ${status} with a body that is not JSON`);
      }
    }
    const error = errorText(text);
    const message = `Pipedrive ${method} ${path}: ${status} ${error}`;
    if (status === 401 || status === 403) throw new CrmAuthError(message);
    if (status === 429) throw new CrmTransientError(message, this.waitAfter429(answerHeaders));
    if (status === 408 || status >= 500) throw new CrmTransientError(message, parseRetryAfter(answerHeaders.get('retry-after'), this.clock.now()) ?? undefined);
    throw new PipedriveRefusal(status, error);
  }

  private waitAfter429(h: Headers): number {
    const now = this.clock.now();
    const asked = parseRetryAfter(h.get('retry-after'), now);
    if (asked !== null) return asked;
    // Not the burst window (it has room left, or the day's budget shows none): the daily budget,
    // which resets at the start of the next day. A budget can refuse with tokens left, fewer than the request costs.
    const burstRoom = Number(h.get('x-ratelimit-remaining'));
    if (h.get('x-daily-requests-left') === '0' || (Number.isFinite(burstRoom) && burstRoom > 0)) return 86_400_000 - (now % 86_400_000);
    const reset = Number(h.get('x-ratelimit-reset'));
    // The burst window is 2 seconds: a missing or garbled reset waits one whole window.
    return Number.isFinite(reset) && reset > 0 ? reset * 1000 : 2000;
  }
}

/** Pipedrive's `error` text (both the v1 and the v2 error bodies have one), else the start of the body. */
function errorText(text: string): string {
  try {
    const b = JSON.parse(text) as { error?: unknown; error_info?: unknown };
    if (typeof b.error === 'string') return b.error;
  } catch {
    // not JSON: a proxy's page
  }
  return text.slice(0, 200);
}

function causeOf(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error ? `${e.message} (${cause.message})` : e.message;
}

import { systemClock, type Clock } from '../../common/clock.ts';
import { parseRetryAfter } from '../../mailbox/providers/retry-after.ts';
import { CrmAuthError, CrmTransientError } from '../connector.ts';
import type { SalesforceCredentials } from './credentials.ts';

/**
 * Salesforce's REST API over plain fetch, with the OAuth session it needs (REST API Developer
 * Guide, "Status Codes and Error Responses"; Salesforce Help, "OAuth 2.0 Refresh Token Flow"):
 *
 *   the session     an access token from POST /services/oauth2/token (grant_type=refresh_token),
 *                   cached in memory with the instance URL and the user id the answer names.
 *                   Salesforce gives no expires_in: the token is used until a 401, then refreshed
 *                   once and the request sent again (a 401 means it was not acted on).
 *   401 again, or   invalid_grant (the refresh token revoked or expired), invalid_client:
 *   refresh refused → CrmAuthError; the connection pauses until an admin reconnects
 *   403 REQUEST_LIMIT_EXCEEDED  the org's 24-h API allocation is spent → CrmTransientError with
 *                   an estimated wait (allocationWaitMs)
 *   5xx, 408, 429, no answer, a timeout, an unreadable 2xx → CrmTransientError (the request may
 *                   have been acted on: writes are upserts by external id, so a retry is safe)
 *   other 4xx       SalesforceRefusal with the first error's errorCode and message
 *
 * Tokens and secrets go only into headers and the form body, never into an error's message.
 */
export const apiVersion = 'v60.0';

export class SalesforceRefusal extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
    this.name = 'SalesforceRefusal';
  }
}

export interface SalesforceClientOptions {
  /** The org's My Domain URL (or an emulator's): where the token endpoint is when the credentials name no instanceUrl. */
  baseUrl: string;
  credentials: SalesforceCredentials;
  timeoutMs?: number;
  clock?: Clock;
  /** The API calls one writeActivities call may make: what a refused allocation waits for (allocationWaitMs). */
  requestsPerBatch: number;
}

interface Session {
  accessToken: string;
  instanceUrl: string;
  userId: string | null;
}

const dayMs = 24 * 3_600_000;

/**
 * How long to wait when the allocation is spent. Salesforce does not say when calls free up: the
 * count is over a rolling 24 h, so calls leave it as they age. Assuming the org's calls were spread
 * evenly over the day, one frees every 24 h / max, and a batch needs `requestsPerBatch` of them;
 * at least a minute (so that retries do not themselves press on the limit), at most an hour (an
 * estimate longer than that is no better than asking again).
 */
export function allocationWaitMs(max: number | null, requestsPerBatch: number): number {
  const even = max && max > 0 ? Math.ceil((requestsPerBatch * dayMs) / max) : 3_600_000;
  return Math.min(3_600_000, Math.max(60_000, even));
}

export class SalesforceClient {
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private session: Session | null = null;
  private refreshing: Promise<Session> | null = null;
  /** REST calls made so far (each counts against the org's API allocation; the Streaming API's do not). */
  requests = 0;
  /** The allocation the last answer's Sforce-Limit-Info gave (api-usage=N/M). */
  usage: { used: number; max: number } | null = null;

  constructor(private readonly opts: SalesforceClientOptions) {
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** The id of the user the connection acts as (the last segment of the token answer's identity URL). */
  async userId(): Promise<string | null> {
    return (this.session ?? (await this.refresh())).userId;
  }

  /**
   * A call under /services/data/vXX.X (`path` starts after it), or a full path: one from an answer
   * (nextRecordsUrl), or the Streaming API's /cometd/XX.X (cometd.ts), which takes the same session.
   */
  async request(method: 'GET' | 'PATCH' | 'POST', path: string, query: Record<string, string> = {}, body?: unknown): Promise<{ status: number; body: any }> {
    const full = path.startsWith('/services/') || path.startsWith('/cometd/') ? path : `/services/data/${apiVersion}${path}`;
    let session = this.session ?? (await this.refresh());
    for (let attempt = 0; ; attempt++) {
      const url = new URL(session.instanceUrl.replace(/\/+$/, '') + full);
      for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
      if (!full.startsWith('/cometd/')) this.requests++;
      const res = await this.fetch(url, {
        method,
        headers: { authorization: `Bearer ${session.accessToken}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }, `${method} ${path.split('?')[0]}`);
      this.readUsage(res.headers);
      if (res.status === 401 && attempt === 0) {
        // The session ended (timeout, revoked): one refresh, then the same request again.
        session = await this.refresh(session);
        continue;
      }
      return this.judge(res, `${method} ${full.split('?')[0]}`);
    }
  }

  private judge(res: { status: number; headers: Headers; text: string }, what: string): { status: number; body: any } {
    const json = parseJson(res.text);
    if (res.status >= 200 && res.status < 300) {
      if (json === invalid) throw new CrmTransientError(`Salesforce answered ${res.status} to ${what} with a body that is not JSON`);
      return { status: res.status, body: json };
    }
    const first = Array.isArray(json) ? (json[0] as { errorCode?: unknown; message?: unknown } | undefined) : undefined;
    const code = typeof first?.errorCode === 'string' ? first.errorCode : '';
    const message = `Salesforce answered ${res.status}${code ? ` ${code}` : ''} to ${what}${typeof first?.message === 'string' ? `: ${first.message}` : ''}`;
    if (res.status === 401) throw new CrmAuthError(`${message} (again after a new access token)`);
    if (code === 'REQUEST_LIMIT_EXCEEDED') throw new CrmTransientError(message, allocationWaitMs(this.usage?.max ?? null, this.opts.requestsPerBatch));
    if (res.status === 403) throw new CrmAuthError(message);
    if (res.status >= 500 || res.status === 408 || res.status === 429) {
      throw new CrmTransientError(message, parseRetryAfter(res.headers.get('retry-after'), this.clock.now()) ?? undefined);
    }
    throw new SalesforceRefusal(res.status, code, typeof first?.message === 'string' ? `${code}: ${first.message}` : message);
  }

  /** One refresh at a time; a caller holding a session that failed gets the one made after it. */
  private refresh(failed?: Session): Promise<Session> {
    if (this.session && this.session !== failed) return Promise.resolve(this.session);
    this.refreshing ??= this.tokenRequest().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async tokenRequest(): Promise<Session> {
    const c = this.opts.credentials;
    const at = (c.instanceUrl ?? this.opts.baseUrl).replace(/\/+$/, '');
    const form = new URLSearchParams({ grant_type: 'refresh_token', client_id: c.clientId, client_secret: c.clientSecret, refresh_token: c.refreshToken });
    const res = await this.fetch(new URL(`${at}/services/oauth2/token`), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
    }, 'POST /services/oauth2/token');
    const json = parseJson(res.text) as { access_token?: unknown; instance_url?: unknown; id?: unknown; error?: unknown; error_description?: unknown } | typeof invalid;
    if (res.status >= 200 && res.status < 300 && json !== invalid && typeof json?.access_token === 'string') {
      const instanceUrl = typeof json.instance_url === 'string' ? json.instance_url : at;
      // The identity URL is https://login.salesforce.com/id/<org id>/<user id>.
      const userId = typeof json.id === 'string' ? (/\/id\/[^/]+\/([^/?#]+)/.exec(json.id)?.[1] ?? null) : null;
      this.session = { accessToken: json.access_token, instanceUrl, userId };
      return this.session;
    }
    this.session = null;
    const error = json !== invalid && typeof json?.error === 'string' ? json.error : '';
    const what = `Salesforce's token endpoint answered ${res.status}${error ? ` ${error}` : ''}${json !== invalid && typeof json?.error_description === 'string' ? ` (${json.error_description})` : ''}`;
    // invalid_grant: the refresh token was revoked or expired; invalid_client*: the app's key or secret changed.
    if (res.status === 400 || res.status === 401 || res.status === 403) throw new CrmAuthError(`${what}: an admin must reconnect Salesforce`);
    throw new CrmTransientError(what, parseRetryAfter(res.headers.get('retry-after'), this.clock.now()) ?? undefined);
  }

  private async fetch(url: URL, init: RequestInit, what: string): Promise<{ status: number; headers: Headers; text: string }> {
    const ac = new AbortController();
    const timer = this.clock.setTimer(this.timeoutMs, () => ac.abort());
    try {
      const res = await fetch(url, { ...init, signal: ac.signal });
      return { status: res.status, headers: res.headers, text: await res.text() };
    } catch (e) {
      throw new CrmTransientError(ac.signal.aborted ? `Salesforce gave no answer within ${this.timeoutMs} ms (${what})` : `Salesforce unreachable (${what}): ${(e as Error).message}`);
    } finally {
      timer.cancel();
    }
  }

  private readUsage(headers: Headers): void {
    const m = /api-usage=(\d+)\/(\d+)/.exec(headers.get('sforce-limit-info') ?? '');
    if (m) this.usage = { used: Number(m[1]), max: Number(m[2]) };
  }
}

const invalid = Symbol('invalid JSON');

function parseJson(text: string): any {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return invalid;
  }
}

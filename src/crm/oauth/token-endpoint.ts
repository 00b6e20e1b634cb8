import { systemClock, type Clock } from '../../common/clock.ts';

/**
 * One request to a CRM's OAuth token endpoint (RFC 6749 §4.1.3 code exchange, §6 refresh), and
 * what its answer means. The CRMs do not agree on error bodies:
 *
 *   RFC 6749 §5.2   {"error": "invalid_grant", "error_description": …} (Salesforce, Pipedrive)
 *   HubSpot         {"status": "BAD_REFRESH_TOKEN" | "BAD_AUTH_CODE" | "BAD_CLIENT_ID" | …, "message": …}
 *
 * so each is read into one verdict: `refused` (the grant or the app was refused: asking again
 * gets the same; a connection pauses), or `unavailable` (no answer, a 5xx, a 429, a body that is
 * not JSON: try again later). The app's secret and the tokens go only into the form or the
 * Authorization header, never into a message.
 */
export interface TokenClient {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  clientAuth: 'post' | 'basic';
}

export interface TokenAnswer {
  accessToken: string;
  refreshToken: string | undefined;
  /** Seconds; undefined when the CRM says nothing (Salesforce). */
  expiresIn: number | undefined;
  /** Salesforce: instance_url. Pipedrive: api_domain. */
  apiUrl: string | undefined;
}

export type TokenResult = { ok: true; answer: TokenAnswer } | { ok: false; kind: 'refused' | 'unavailable'; error: string; retryAfterMs?: number };

export async function tokenRequest(c: TokenClient, grant: Record<string, string>, o: { timeoutMs?: number; clock?: Clock } = {}): Promise<TokenResult> {
  const clock = o.clock ?? systemClock;
  const timeoutMs = o.timeoutMs ?? 30_000;
  const form = new URLSearchParams(grant);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (c.clientAuth === 'basic') {
    // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString('base64')}`;
  } else {
    form.set('client_id', c.clientId);
    form.set('client_secret', c.clientSecret);
  }
  const ac = new AbortController();
  const timer = clock.setTimer(timeoutMs, () => ac.abort());
  let status: number;
  let text: string;
  try {
    const res = await fetch(c.tokenUrl, { method: 'POST', headers, body: form.toString(), signal: ac.signal });
    status = res.status;
    text = await res.text();
  } catch (e) {
    return { ok: false, kind: 'unavailable', error: ac.signal.aborted ? `no answer within ${timeoutMs} ms` : `unreachable (${(e as Error).message})` };
  } finally {
    timer.cancel();
  }
  let body: Record<string, unknown> | undefined;
  try {
    const v: unknown = JSON.parse(text);
    if (v && typeof v === 'object' && !Array.isArray(v)) body = v as Record<string, unknown>;
  } catch {
    // a proxy's page: judged by the status below
  }
  const str = (k: string) => (typeof body?.[k] === 'string' && body[k] !== '' ? (body[k] as string) : undefined);
  if (status >= 200 && status < 300) {
    const accessToken = str('access_token');
    if (!body || !accessToken) return { ok: false, kind: 'unavailable', error: `answered ${status} without an access token` };
    const expires = Number(body.expires_in);
    return { ok: true, answer: { accessToken, refreshToken: str('refresh_token'), expiresIn: Number.isFinite(expires) && expires > 0 ? expires : undefined, apiUrl: str('instance_url') ?? str('api_domain') } };
  }
  const code = str('error') ?? str('status') ?? '';
  const description = str('error_description') ?? str('message');
  const error = `${status}${code ? ` ${code}` : ''}${description ? ` (${description})` : ''}`;
  if (status >= 500 || status === 429 || status === 408 || !body) return { ok: false, kind: 'unavailable', error };
  return { ok: false, kind: 'refused', error };
}

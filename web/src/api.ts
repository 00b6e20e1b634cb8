import type { ApiBody, ApiResponse, ApiRoute } from './types.ts';

/**
 * The browser's client for the Cadenza HTTP API: same origin, session cookie, and the CSRF token
 * from GET /api/auth/me sent on every unsafe request (src/api/auth/access.ts).
 */

export interface ApiErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

let csrfToken = '';
export function setCsrfToken(token: string): void {
  csrfToken = token;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export async function api<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const text = await send(method, path, body);
  return (text ? safeJson(text) : undefined) as T;
}

/** A POST whose answer is a file (a CSV export): its text, or the API's error. */
export function apiText(path: string, body: unknown): Promise<string> {
  return send('POST', path, body);
}

async function send(method: Method, path: string, body: unknown): Promise<string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) {
    const e = ((text ? safeJson(text) : undefined) as ApiErrorBody | undefined)?.error;
    throw new ApiError(res.status, e?.code ?? 'HTTP_' + res.status, e?.message ?? res.statusText, e?.details ?? {});
  }
  return text;
}

/**
 * A call checked against the API's own schemas (types.ts, generated): the route, named
 * `METHOD /path` as in src/api/routes, types the JSON body it takes and the answer it gives; `path`
 * is its URL with the ids filled in. A route without a body takes none.
 */
export function call<R extends ApiRoute>(route: R, path: string, ...body: [ApiBody<R>] extends [never] ? [] : [body: ApiBody<R>]): Promise<ApiResponse<R>> {
  return api<ApiResponse<R>>(route.slice(0, route.indexOf(' ')) as Method, path, body[0]);
}

/** Sends a file as the request body (streamed by the browser, not read into memory), e.g. a CSV import. */
export async function apiUpload<T>(path: string, file: Blob, contentType: string): Promise<T> {
  const res = await fetch(path, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': contentType, ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}) },
    credentials: 'same-origin',
    body: file,
  });
  const text = await res.text();
  const json: unknown = text ? safeJson(text) : undefined;
  if (!res.ok) {
    const e = (json as ApiErrorBody | undefined)?.error;
    throw new ApiError(res.status, e?.code ?? 'HTTP_' + res.status, e?.message ?? res.statusText, e?.details ?? {});
  }
  return json as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { error: { code: 'BAD_RESPONSE', message: text.slice(0, 200), details: {} } };
  }
}

/** Path of a workspace resource: /api/workspaces/<id>/<rest>. */
export function ws(workspaceId: string, rest: string): string {
  return `/api/workspaces/${encodeURIComponent(workspaceId)}/${rest}`;
}

/** GET /api/auth/me: the signed-in person (generated from the API's schema, like every shape in types.ts). */
export type { Me } from './types.ts';

/**
 * An API message in plain words: a validation message names the field as the code does
 * ("body.timeZone: …"); a person reads "Time zone: …".
 */
export function plainMessage(message: string): string {
  return message.replace(/^(?:body|query|params)\.([\w.]+): /, (_m, path: string) => {
    const words = path.split('.').pop()!.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
    return `${words.charAt(0).toUpperCase()}${words.slice(1)}: `;
  });
}

export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) return plainMessage(e.message);
  if (e instanceof Error) return e.message;
  return String(e);
}

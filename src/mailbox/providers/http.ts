import http from 'node:http';
import https from 'node:https';
import type { Clock } from '../../common/clock.ts';

/**
 * The one HTTP exchange the provider clients (Gmail API, Microsoft Graph) make, reporting how far
 * it got when it failed, because that is what decides whether a send may have happened:
 *
 *   connect   no connection was made (refused, unknown host, timeout while connecting): the
 *             provider never saw the request.
 *   request   connected, but the request body was not completely written: an HTTP server does
 *             not act on a request it has not received whole.
 *   response  the whole request was written (the socket's 'finish') and no complete answer came
 *             (reset, timeout, abort, truncated body): the provider may have acted on it.
 *
 * node:http rather than fetch: fetch cannot tell the second case from the third.
 *
 * Every request opens its own connection (no keep-alive pool): a POST on a reused idle socket that
 * the server has just closed fails with a reset that looks exactly like "dropped after the body
 * was sent", which would make a send ambiguous for nothing. A mailbox sends a few messages a
 * minute at most, so the extra handshake costs nothing that matters, and nothing is left open.
 */

export type HttpStage = 'connect' | 'request' | 'response';

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: URL;
  headers?: Record<string, string>;
  body?: Buffer;
  /** One deadline for the whole exchange, connection to last byte (nodemailer's connection deadline). */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Answers larger than this are cut off and reported as a failure at 'response'. */
  maxResponseBytes?: number;
}

export type HttpResult =
  | { kind: 'response'; status: number; headers: http.IncomingHttpHeaders; body: Buffer }
  | {
      kind: 'failed';
      stage: HttpStage;
      /** Human-readable, for logs and outcome reasons; never contains the Authorization header. */
      reason: string;
      /** The status line, when it arrived before the failure (a truncated body). */
      status: number | null;
      timedOut: boolean;
      aborted: boolean;
      /** The answer was cut off at maxResponseBytes: asking again would get the same. */
      tooLarge?: boolean;
    };

const defaultMaxResponseBytes = 64 * 1024 * 1024;

/** Performs one request. Never throws for anything the network or the server does. */
export function httpRequest(clock: Clock, req: HttpRequest): Promise<HttpResult> {
  return new Promise<HttpResult>((resolve) => {
    const lib = req.url.protocol === 'https:' ? https : req.url.protocol === 'http:' ? http : null;
    if (!lib) {
      resolve(failed('connect', `unsupported URL scheme ${req.url.protocol}`, null, false, false));
      return;
    }
    if (req.signal?.aborted) {
      resolve(failed('connect', 'aborted before the request started', null, false, true));
      return;
    }
    let settled = false;
    let connected = false;
    let bodyWritten = false;
    let status: number | null = null;
    let timedOut = false;
    let aborted = false;
    const maxBytes = req.maxResponseBytes ?? defaultMaxResponseBytes;

    const finish = (r: HttpResult) => {
      if (settled) return;
      settled = true;
      timer.cancel();
      req.signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const stage = (): HttpStage => (bodyWritten ? 'response' : connected ? 'request' : 'connect');

    const headers: Record<string, string> = { ...req.headers };
    if (req.body) headers['content-length'] = String(req.body.length);
    const cr = lib.request(req.url, { method: req.method, headers, agent: false });

    const timer = clock.setTimer(req.timeoutMs, () => {
      timedOut = true;
      cr.destroy(new Error(`no answer within ${req.timeoutMs} ms`));
    });
    const onAbort = () => {
      aborted = true;
      cr.destroy(new Error('aborted'));
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });

    cr.on('socket', (socket) => {
      // A socket handed over already connected (never with agent: false, but cheap to cover).
      if (!socket.connecting) connected = true;
      socket.once('connect', () => (connected = true));
      socket.once('secureConnect', () => (connected = true));
    });
    // 'finish' alone is not proof: Node emits it even when the last write failed (EPIPE: the
    // server closed before reading everything), because the write's error reaches the callback
    // before the request's 'error'. So the body counts as handed over only when its write
    // succeeded too.
    let writeFailed = false;
    cr.on('finish', () => (bodyWritten = !writeFailed));
    cr.on('error', (e: NodeJS.ErrnoException) => {
      const why = e.code ? `${e.code}: ${e.message}` : e.message;
      finish(failed(stage(), why, status, timedOut, aborted));
    });
    cr.on('response', (res) => {
      status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size > maxBytes) return;
        size += c.length;
        if (size > maxBytes) {
          finish({ ...failed('response', `answer larger than ${maxBytes} bytes`, status, timedOut, aborted), tooLarge: true } as HttpResult);
          cr.destroy();
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => {
        // A response can come before the whole body was written (a server refusing early, e.g.
        // 401): it is an answer all the same.
        finish({ kind: 'response', status: status!, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('aborted', () => finish(failed('response', 'connection closed in the middle of the answer', status, timedOut, aborted)));
      res.on('error', (e) => finish(failed('response', e.message, status, timedOut, aborted)));
    });
    if (req.body && req.body.length > 0) {
      cr.write(req.body, (err) => {
        if (err) writeFailed = true;
      });
    }
    cr.end();
  });
}

function failed(stage: HttpStage, reason: string, status: number | null, timedOut: boolean, aborted: boolean): HttpResult {
  return { kind: 'failed', stage, reason, status, timedOut, aborted };
}

/** The body parsed as JSON, or undefined when it is empty or not JSON. */
export function jsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A header's single value (Node lowercases names; a repeated header keeps its first value). */
export function headerOf(headers: http.IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Clock } from '../../common/clock.ts';
import { isPrivateAddress, vettedLookup, type DestinationPolicy } from './destination.ts';

/** `retryAfter`: the answer's Retry-After header as sent (a 429's or 503's wait), when it had one. */
export type PostResult = { kind: 'answered'; status: number; retryAfter?: string } | { kind: 'error'; error: string };

/**
 * One webhook POST: no redirects followed (a 3xx is an answer, and not a success), one deadline for
 * the whole exchange, the answer's body read up to 4 KB and dropped (only the status matters), and
 * the destination vetted on the address actually connected to (destination.ts).
 */
export function postWebhook(url: string, body: string, headers: Record<string, string>, o: DestinationPolicy & { timeoutMs: number; clock: Clock }): Promise<PostResult> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve({ kind: 'error', error: 'invalid URL' });
    }
    // Node opens IP literals without calling `lookup`, so they are checked here.
    const host = u.hostname.replace(/^\[|\]$/g, '');
    if (!o.allowPrivate && isIP(host) && isPrivateAddress(host)) return resolve({ kind: 'error', error: `refused: ${host} is a loopback or private address` });
    const lib = u.protocol === 'https:' ? https : u.protocol === 'http:' ? http : null;
    if (!lib) return resolve({ kind: 'error', error: `unsupported scheme ${u.protocol}` });
    let settled = false;
    const done = (r: PostResult) => {
      if (settled) return;
      settled = true;
      deadline.cancel();
      resolve(r);
    };
    const req = lib.request(
      u,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Cadenza-Webhooks/1', ...headers },
        lookup: vettedLookup(o),
        agent: false,
      },
      (res) => {
        let read = 0;
        res.on('data', (c: Buffer) => {
          read += c.length;
          if (read > 4096) res.destroy();
        });
        const retryAfter = res.headers['retry-after'];
        const answered = (): PostResult => ({ kind: 'answered', status: res.statusCode ?? 0, ...(retryAfter ? { retryAfter } : {}) });
        res.on('close', () => done(answered()));
        res.on('error', () => done(answered()));
      },
    );
    const deadline = o.clock.setTimer(o.timeoutMs, () => req.destroy(new Error(`no answer within ${o.timeoutMs} ms`)));
    req.on('error', (e: Error) => done({ kind: 'error', error: e.message }));
    req.end(body);
  });
}

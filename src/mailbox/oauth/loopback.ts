import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cadenzaError } from '../../common/errors.ts';
import { completeAuthorization, startAuthorization, type Connected, type OAuthFlowDeps } from './flow.ts';
import type { OAuthMode, OAuthProviderName } from './providers.ts';

/**
 * Connecting a mailbox from the command line (`cadenza mailbox connect`), with the loopback
 * redirect of RFC 8252 §7.3: a one-shot HTTP listener on 127.0.0.1 receives the provider's
 * redirect, so no running server and no public URL are needed. The user opens the printed URL in
 * any browser on the same machine.
 *
 * Provider registration: Microsoft accepts any port on http://localhost / 127.0.0.1 for a
 * redirect URI registered without one; Google does for "Desktop app" clients, while a "Web
 * application" client needs the exact URI, port included: give a fixed `port` and register
 * http://127.0.0.1:PORT/oauth/callback.
 */
export interface LoopbackRequest {
  workspaceId: string;
  provider: OAuthProviderName;
  mode: OAuthMode;
  loginHint?: string;
  /** 0: any free port. */
  port?: number;
  /** Give up after this long (default: the flow's own lifetime, 10 minutes). */
  timeoutMs?: number;
  /** Called with the URL the user must open. */
  onUrl(url: URL): void;
}

export async function connectWithLoopback(deps: OAuthFlowDeps, req: LoopbackRequest): Promise<Connected> {
  let settle!: { resolve: (c: Connected) => void; reject: (e: unknown) => void };
  const done = new Promise<Connected>((resolve, reject) => (settle = { resolve, reject }));
  let busy = false;
  const server = http.createServer((hreq, res) => {
    const url = new URL(hreq.url ?? '/', 'http://127.0.0.1');
    // Browsers also ask for /favicon.ico; only the callback counts, and only once. The answer is
    // written before the command goes on (and closes every connection).
    if (hreq.method !== 'GET' || url.pathname !== '/oauth/callback' || busy) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found');
      return;
    }
    busy = true;
    completeAuthorization(deps, url.searchParams).then(
      (c) => {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(`Mailbox ${c.email} is connected to Cadenza. You can close this window.\n`, () => settle.resolve(c));
      },
      (e: unknown) => {
        res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(`Cadenza could not connect the mailbox: ${(e as Error).message}\n`, () => settle.reject(e));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(req.port ?? 0, '127.0.0.1', () => resolve());
  });
  const timer = deps.clock.setTimer(req.timeoutMs ?? deps.flowTtlMs ?? 10 * 60_000, () =>
    settle.reject(cadenzaError('INVALID_INPUT', 'no answer from the browser in time; run the command again')),
  );
  try {
    const port = (server.address() as AddressInfo).port;
    const started = await startAuthorization(deps, {
      workspaceId: req.workspaceId,
      provider: req.provider,
      mode: req.mode,
      redirectUri: `http://127.0.0.1:${port}/oauth/callback`,
      ...(req.loginHint ? { loginHint: req.loginHint } : {}),
    });
    req.onUrl(started.url);
    return await done;
  } finally {
    timer.cancel();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

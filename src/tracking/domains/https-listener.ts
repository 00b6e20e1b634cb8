import type { AddressInfo, Socket } from 'node:net';
import { createServer, type Server } from 'node:https';
import type { FastifyInstance } from 'fastify';
import type { CertificateBook } from './certificate-book.ts';

/**
 * The HTTPS listener of custom tracking hosts (its own port; 443 in production): TLS with the
 * certificate of the host the client names (SNI, from the CertificateBook, so a renewed
 * certificate is served on the next handshake), then the app's own routing: the same Fastify
 * instance as the HTTP port, where the host guard (host-guard.ts) lets only the tracking routes
 * answer for connections that came in here.
 */
export interface TrackingListener {
  port: number;
  /** Whether a request's socket came in on this listener. */
  owns(socket: unknown): boolean;
  close(): Promise<void>;
}

export async function listenTrackingHttps(app: FastifyInstance, book: CertificateBook, o: { port: number; host: string }): Promise<TrackingListener> {
  const sockets = new WeakSet<object>();
  const server: Server = createServer({ SNICallback: book.sniCallback, minVersion: 'TLSv1.2' }, (req, res) => app.routing(req, res));
  // Bounds like the app port's (api/http/drain.ts), the request's shorter: tracking bodies are
  // tiny (an RFC 8058 POST), so a slow client cannot hold a socket.
  server.headersTimeout = 20_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  const open = new Set<Socket>();
  server.on('secureConnection', (s) => {
    sockets.add(s);
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  // A handshake for a host without a certificate fails; that is the client's answer, not ours to log.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    owns: (socket) => typeof socket === 'object' && socket !== null && sockets.has(socket),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Requests in flight had the app's drain deadline already (the app drains first).
        for (const s of open) s.destroy();
      }),
  };
}

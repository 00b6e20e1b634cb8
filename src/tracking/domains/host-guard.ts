import type { FastifyInstance } from 'fastify';
import { requestHost } from './challenge-route.ts';

/**
 * On a workspace's custom tracking host only the tracking routes (pixel, click, unsubscribe) and
 * the ACME challenge answer: the host is the customer's name, and the sign-in page, the API or the
 * web app under it would be ours passing as theirs (phishing, cookies scoped to their domain).
 * Everything arriving on the HTTPS tracking listener is on such a host (it has no certificate of
 * its own), and on the app's port a Host that is a known custom host is treated the same.
 *
 * The exception is an agency client's app host (purpose 'app', 0103_agency.sql): the agency set
 * it up so that the client's people use the app under their own name, so the app answers there
 * in full, and /api/branding tells the web app whose branding to show. Its cookies are scoped
 * to that host: a session there is not a session on the installation's own name.
 */
const ALLOWED = /^\/(?:t\/[ocu]\/|\.well-known\/acme-challenge\/)/;

export function customHostGuard(app: FastifyInstance, isCustomHost: (host: string) => boolean, onTrackingListener: (socket: unknown) => boolean, isAppHost: (host: string) => boolean = () => false): void {
  app.addHook('onRequest', async (req, reply) => {
    if (ALLOWED.test(req.url)) return;
    const host = requestHost(req.headers.host);
    if (host !== undefined && isAppHost(host)) return;
    if (onTrackingListener(req.raw.socket) || (host !== undefined && isCustomHost(host))) {
      return reply.code(404).type('text/plain; charset=utf-8').send('not found\n');
    }
  });
}

import type { FastifyInstance } from 'fastify';

/**
 * The web app's Content Security Policy: its own scripts, styles and connections only, no inline
 * script (Vite's build has none: index.html loads one module file), no plugins, and never framed
 * (clickjacking). React sets inline styles through the CSSOM, which `style-src 'self'` allows.
 */
export const webAppCsp = webAppCspWith([]);

/**
 * The same policy with more origins the app may connect to: the softphone's SIP WebSocket
 * (CADENZA_SIP_WS_URL's origin exactly, dialer/settings.ts sipWsOrigin), never a scheme-wide wss:.
 */
export function webAppCspWith(connectOrigins: readonly string[]): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    // The rep listens back to their recorded voicemail message (web/src/dialer/VoicemailRecorder.tsx): an object URL of the recording.
    "media-src 'self' blob:",
    ["connect-src 'self'", ...connectOrigins].join(' '),
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Headers on every answer: no MIME sniffing, no Referer leaving with a click (tracking redirects
 * included), never framed. The strict CSP is on everything but /docs (Swagger UI styles itself
 * inline); /docs still may not be framed.
 */
export function registerSecurityHeaders(app: FastifyInstance, opts: { connectOrigins?: readonly string[] } = {}): void {
  const csp = opts.connectOrigins?.length ? webAppCspWith(opts.connectOrigins) : webAppCsp;
  app.addHook('onSend', async (req, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    // The one framed answer (an inbox message's sandboxed HTML, routes/inbox.ts …/frame) says SAMEORIGIN itself.
    if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', 'DENY');
    const path = req.url.split('?', 1)[0]!;
    // A page with a policy of its own (the unsubscribe confirmation: default-src 'none' and its one
    // hashed style, tracking/pages.ts) keeps it: this one is the web app's.
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', path === '/docs' || path.startsWith('/docs/') ? "frame-ancestors 'none'" : csp);
    return payload;
  });
}

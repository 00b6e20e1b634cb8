import type { FastifyInstance } from 'fastify';
import { confirmPage, donePage, pageHeaders } from '../pages.ts';
import { openToken } from '../tokens.ts';
import { honourUnsubscribe, type UnsubscribeDeps } from '../unsubscribe.ts';
import { sendNotFound, tokenParams, type TokenRequest } from './common.ts';
import { workspaceRow } from '../../workspace/workspace-row.ts';

/**
 * GET  /t/u/<token> — a page with one button. A GET never unsubscribes: mail security scanners fetch
 *                    every link of every message, and would unsubscribe everyone.
 * POST /t/u/<token> — unsubscribes. RFC 8058 one-click: the mailbox provider POSTs the body
 *                    `List-Unsubscribe=One-Click` (urlencoded or multipart), with no cookie and no
 *                    confirmation, and expects a 2xx. The confirmation page's form posts here too.
 *                    The token alone authorises it; the body only tells which way it came.
 */
export function unsubscribeRoutes(scope: FastifyInstance, ctx: UnsubscribeDeps & { key: Buffer }): void {
  scope.get('/t/u/*', { schema: { params: tokenParams } }, async (req: TokenRequest, reply) => {
    const t = openToken(ctx.key, req.params['*'], 'u');
    if (!t) return sendNotFound(reply);
    const ws = await workspaceRow(ctx.store.db, t.ws);
    if (!ws) return sendNotFound(reply);
    // Relative to /t/u/<token>: the same URL, whatever host or path prefix the page was served under.
    return reply.headers(pageHeaders).send(confirmPage({ action: req.params['*'], sender: ws.name }));
  });

  scope.post('/t/u/*', { schema: { params: tokenParams } }, async (req: TokenRequest, reply) => {
    const t = openToken(ctx.key, req.params['*'], 'u');
    if (!t) return sendNotFound(reply);
    const source = unsubscribeSource(req.headers['content-type'], req.body);
    const r = await honourUnsubscribe(ctx, { workspaceId: t.ws, sendRequestId: t.sr, source });
    if (r.outcome === 'not_found') return sendNotFound(reply);
    return reply.headers(pageHeaders).send(donePage(r.outcome === 'already'));
  });
}

/**
 * Which way a POST came, for the journal: 'page' (our form), 'one_click' (RFC 8058 body from a
 * mailbox provider), or 'post' (anything else that POSTed the link). Never throws.
 */
export function unsubscribeSource(contentType: string | undefined, body: unknown): 'page' | 'one_click' | 'post' {
  const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('latin1') : '';
  if (text === '') return 'post';
  let via: string | null = null;
  let key: string | null = null;
  if (/^\s*multipart\/form-data/i.test(contentType ?? '')) {
    // RFC 7578 parts: the field name in Content-Disposition, a blank line, the value.
    const field = (name: string) => new RegExp(`name="${name}"[^\\r\\n]*\\r?\\n(?:[^\\r\\n]+\\r?\\n)*\\r?\\n([^\\r\\n]*)`, 'i').exec(text)?.[1]?.trim() ?? null;
    via = field('via');
    key = field('List-Unsubscribe');
  } else {
    const p = new URLSearchParams(text);
    via = p.get('via');
    key = p.get('List-Unsubscribe');
  }
  if (via === 'page') return 'page';
  if (key !== null && key.toLowerCase() === 'one-click') return 'one_click';
  return 'post';
}

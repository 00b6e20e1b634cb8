import type { FastifyInstance } from 'fastify';
import { parseMessage, plausibleAddress, type ParsedMessage } from '../../mime.ts';
import type { GraphRouteContext } from '../context.ts';
import { graphErrors } from '../errors.ts';

/**
 * user: sendMail (api-reference/v1.0/api/user-sendmail.md), MIME form: `Content-Type: text/plain`
 * and the message in base64. Answers 202 with an empty body once the draft is saved; the rest
 * happens later (store.ts). Route name for fault injection: 'sendMail'.
 *
 * The JSON form (`{message, saveToSentItems}`) is not emulated: Cadenza sends MIME so that its
 * own bytes and Message-ID go out. It is refused with a 400 saying so.
 */
const maxRequestBytes = 4 * 1024 * 1024;

export function registerSendMailRoutes(app: FastifyInstance, ctx: GraphRouteContext): void {
  app.post<{ Params: { user?: string } }>('/sendMail', (req, reply) =>
    ctx.run('sendMail', req, reply, async (mb) => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type === 'application/json') return graphErrors.badRequest('emulator: only the MIME form of sendMail is implemented');
      if (type !== 'text/plain') return graphErrors.badRequest(`Unsupported Content-Type for sendMail: ${type || '(none)'}`);
      const text = typeof req.body === 'string' ? req.body : '';
      if (Buffer.byteLength(text) > maxRequestBytes) return graphErrors.tooLarge();
      const compact = text.replace(/[\r\n]/g, '');
      if (compact === '' || compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return graphErrors.mimeInvalidBase64();
      const raw = Buffer.from(compact, 'base64');
      let parsed: ParsedMessage;
      try {
        parsed = await parseMessage(raw);
      } catch {
        return graphErrors.mimeInvalid();
      }
      if (parsed.headers.length === 0) return graphErrors.mimeInvalid();
      const recipients = [...parsed.to, ...parsed.cc, ...parsed.bcc];
      const rawHeaders = [...parsed.rawRecipientHeaders.to, ...parsed.rawRecipientHeaders.cc, ...parsed.rawRecipientHeaders.bcc];
      if (recipients.length === 0) {
        return rawHeaders.some((h) => h.trim() !== '') ? graphErrors.invalidRecipient(rawHeaders.join(', ')) : graphErrors.noRecipients();
      }
      const bad = recipients.find((a) => !plausibleAddress(a));
      if (bad) return graphErrors.invalidRecipient(bad);
      ctx.store.sendMail(mb, raw, parsed, { lost: ctx.takeLost() });
      return { status: 202 };
    }),
  );
}

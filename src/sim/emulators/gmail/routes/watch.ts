import type { FastifyInstance } from 'fastify';
import type { GmailRouteContext } from '../context.ts';
import { gmailErrors } from '../errors.ts';
import type { PubSubEmulator } from '../pubsub.ts';
import type { GmailWatches } from '../watch.ts';

/**
 * users.watch and users.stop (guides/push). watch: `{topicName, labelIds?, labelFilterBehavior?}`
 * → `{historyId, expiration}` (expiration in epoch ms, as a string); the topic must exist. stop:
 * empty answer. Route names for fault injection: 'watch', 'stop'.
 */
export function registerWatchRoutes(app: FastifyInstance, ctx: GmailRouteContext & { watches: GmailWatches; pubsub: PubSubEmulator }): void {
  app.post<{ Params: { userId: string } }>('/gmail/v1/users/:userId/watch', (req, reply) =>
    ctx.run('watch', req, reply, (mb) => {
      const body = req.body as { topicName?: unknown; labelIds?: unknown; labelFilterBehavior?: unknown; labelFilterAction?: unknown } | undefined;
      if (!body || typeof body !== 'object' || Buffer.isBuffer(body) || typeof body.topicName !== 'string') {
        return gmailErrors.invalidArgument('Invalid topicName');
      }
      if (!/^projects\/[^/]+\/topics\/[^/]+$/.test(body.topicName)) {
        return gmailErrors.invalidArgument('Invalid topicName does not match projects/SOME_PROJECT/topics/*');
      }
      if (!ctx.pubsub.hasTopic(body.topicName)) return gmailErrors.notFound();
      const labelIds = Array.isArray(body.labelIds) ? body.labelIds.filter((x): x is string => typeof x === 'string') : [];
      const b = body.labelFilterBehavior ?? body.labelFilterAction ?? 'INCLUDE';
      const behavior = String(b).toUpperCase();
      if (behavior !== 'INCLUDE' && behavior !== 'EXCLUDE') return gmailErrors.invalidArgument(`Invalid labelFilterBehavior: ${String(b)}`);
      const w = ctx.watches.start(mb, { topicName: body.topicName, labelIds, behavior });
      return { status: 200, body: { historyId: String(mb.historyId), expiration: String(w.expiration) } };
    }),
  );

  app.post<{ Params: { userId: string } }>('/gmail/v1/users/:userId/stop', (req, reply) =>
    ctx.run('stop', req, reply, (mb) => {
      ctx.watches.stop(mb);
      return { status: 204 };
    }),
  );
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FaultInjector } from '../faults.ts';
import type { EmulatorReply, RequestRecord } from '../server.ts';
import type { TokenRegistry } from '../tokens.ts';
import type { GmailMailbox } from './mailbox.ts';
import type { GmailStore } from './store.ts';

/** What every Gmail route group gets: the store, and `run` (token check, faults, then the handler). */
export interface GmailRouteContext {
  store: GmailStore;
  tokens: TokenRegistry;
  faults: FaultInjector;
  log: RequestRecord[];
  run(
    route: string,
    req: FastifyRequest<{ Params: { userId: string } }>,
    reply: FastifyReply,
    handler: (mb: GmailMailbox) => Promise<EmulatorReply> | EmulatorReply,
    /** The scopes of which the token must carry one (a token without scopes passes): else 403 insufficientPermissions. */
    scopes?: readonly string[],
  ): Promise<FastifyReply>;
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FaultInjector } from '../faults.ts';
import type { EmulatorReply, RequestRecord } from '../server.ts';
import type { TokenRegistry } from '../tokens.ts';
import type { GraphMailbox } from './mailbox.ts';
import type { GraphStore } from './store.ts';

/** What every Graph route group gets: the store, and `run` (token check, faults, then the handler). */
export interface GraphRouteContext {
  store: GraphStore;
  tokens: TokenRegistry;
  faults: FaultInjector;
  log: RequestRecord[];
  /** True once per send the test asked to lose (202, then the submission never completes). */
  takeLost(): boolean;
  run(
    route: string,
    req: FastifyRequest<{ Params: { user?: string } }>,
    reply: FastifyReply,
    handler: (mb: GraphMailbox) => Promise<EmulatorReply> | EmulatorReply,
    /** The permissions of which the token must carry one (a token without scopes passes): else 403 ErrorAccessDenied. */
    scopes?: readonly string[],
  ): Promise<FastifyReply>;
}

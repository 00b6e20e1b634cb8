import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Fault, FaultInjector } from './faults.ts';

/**
 * A real HTTP server on 127.0.0.1 and a random port, one per test (or per describe), for a
 * provider emulator: the connector code talks to it over TCP exactly as to the provider.
 */
export interface EmulatorReply {
  status: number;
  headers?: Record<string, string>;
  /** JSON-serialised unless a Buffer or a string. Absent: an empty body. */
  body?: unknown;
}

export interface RequestRecord {
  route: string;
  method: string;
  url: string;
  /** The answer's status, or what happened instead. */
  outcome: number | 'dropped' | 'hung';
  authorization: string | undefined;
}

export interface EmulatorServer {
  app: FastifyInstance;
  /** 'http://127.0.0.1:PORT', what the connector takes as its base URL. */
  origin: string;
  close(): Promise<void>;
}

export async function startEmulatorServer(register: (app: FastifyInstance) => void | Promise<void>): Promise<EmulatorServer> {
  const app = Fastify({
    logger: false,
    // Gmail's upload form takes 35 MB (base64 makes it more); nothing the tests send comes close.
    bodyLimit: 64 * 1024 * 1024,
    // close() must not wait for a connection a 'hang' fault left open.
    forceCloseConnections: true,
  });
  // Graph's MIME sendMail is text/plain (base64); keep other bodies as bytes for the routes to judge.
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  await register(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('emulator: no TCP address');
  let closed = false;
  return {
    app,
    origin: `http://127.0.0.1:${addr.port}`,
    close: async () => {
      if (closed) return;
      closed = true;
      await app.close();
    },
  };
}

/**
 * Runs one route: `guard` (authentication: an answer here ends the request, as a provider checks
 * the token before anything else), then a queued fault if any, then the handler.
 */
export async function runRoute(
  ctx: { faults: FaultInjector; log: RequestRecord[] },
  route: string,
  req: FastifyRequest,
  reply: FastifyReply,
  guard: () => EmulatorReply | null,
  handler: () => Promise<EmulatorReply> | EmulatorReply,
  decorate: (r: EmulatorReply) => EmulatorReply = (r) => r,
): Promise<FastifyReply> {
  const record: RequestRecord = { route, method: req.method, url: req.url, outcome: 0, authorization: req.headers.authorization };
  ctx.log.push(record);
  const refused = guard();
  if (refused) return send(reply, record, decorate(refused));
  const fault: Fault | undefined = ctx.faults.take(route);
  if (fault?.kind === 'respond') {
    return send(reply, record, decorate({ status: fault.status, headers: fault.headers, body: fault.body }));
  }
  if (fault && fault.after === 'receiving') return cut(reply, record, fault.kind);
  const answer = await handler();
  if (fault) return cut(reply, record, fault.kind);
  return send(reply, record, decorate(answer));
}

function send(reply: FastifyReply, record: RequestRecord, r: EmulatorReply): FastifyReply {
  record.outcome = r.status;
  reply.code(r.status);
  for (const [k, v] of Object.entries(r.headers ?? {})) reply.header(k, v);
  if (r.body === undefined) return reply.send();
  if (Buffer.isBuffer(r.body) || typeof r.body === 'string') return reply.send(r.body);
  reply.header('content-type', 'application/json; charset=utf-8');
  return reply.send(JSON.stringify(r.body));
}

function cut(reply: FastifyReply, record: RequestRecord, kind: 'drop' | 'hang'): FastifyReply {
  reply.hijack();
  if (kind === 'drop') {
    record.outcome = 'dropped';
    reply.raw.socket?.destroy();
  } else {
    record.outcome = 'hung';
  }
  return reply;
}

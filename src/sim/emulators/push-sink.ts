import Fastify from 'fastify';

/**
 * A loopback endpoint for the emulators' outgoing push in their own tests: records every POST
 * (query, body and the Authorization header, for senders that sign in with basic auth) and answers with `status` (or echoes a Graph validation token when `echo`).
 */
export interface PushSink {
  url: string;
  received: Array<{ query: Record<string, string>; body: unknown; authorization?: string }>;
  status: number;
  echo: boolean;
  close(): Promise<void>;
}

export async function startPushSink(): Promise<PushSink> {
  const app = Fastify({ forceCloseConnections: true });
  const sink: PushSink = { url: '', received: [], status: 204, echo: true, close: () => app.close() };
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_r, b, done) => done(null, b));
  app.post('/hook', async (req, reply) => {
    const query = req.query as Record<string, string>;
    sink.received.push({ query, body: req.body, authorization: req.headers.authorization });
    if (query.validationToken !== undefined && sink.echo) return reply.code(200).type('text/plain').send(query.validationToken);
    return reply.code(sink.status).send();
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  sink.url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/hook`;
  return sink;
}

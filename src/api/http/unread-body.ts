import type { FastifyInstance, FastifyRequest } from 'fastify';

/** How much of an unread body is read and dropped after the answer, and for how long, before the connection is closed. */
export const DISCARD_LIMITS = { bytes: 1024 * 1024, ms: 5_000 };

/**
 * Any answer sent before its request's body was read to the end (a refused upload: 401, 403, a
 * bad query, a mapping that names no column) is marked `Connection: close`, and what is left of
 * the body is read and dropped for a bounded while, then the connection is closed. Without it a
 * handler waited for the rest of a stalled upload before answering, and Node's own dump after an
 * answer reads any amount: a client sending slowly or endlessly held the answer, the connection
 * and a graceful stop. Dropping a bounded rest (rather than closing at once) lets a client that
 * is still writing read the answer instead of a reset.
 */
export function boundUnreadBodies(app: FastifyInstance): void {
  app.addHook('onSend', async (req, reply, payload) => {
    if (!bodyDone(req)) reply.header('connection', 'close');
    return payload;
  });
  app.addHook('onResponse', async (req) => {
    if (!bodyDone(req)) discardRest(req);
  });
}

function bodyDone(req: FastifyRequest): boolean {
  return req.raw.complete || req.raw.destroyed;
}

function discardRest(req: FastifyRequest): void {
  const stream = req.raw;
  let dropped = 0;
  const stop = () => {
    clearTimeout(timer);
    stream.off('data', onData);
  };
  const close = () => {
    stop();
    // An IncomingMessage destroyed closes its socket.
    stream.destroy();
  };
  const onData = (c: Buffer) => {
    dropped += c.length;
    if (dropped > DISCARD_LIMITS.bytes) close();
  };
  const timer = setTimeout(close, DISCARD_LIMITS.ms);
  timer.unref();
  stream.once('end', stop);
  stream.once('close', stop);
  stream.on('data', onData);
  stream.resume();
}

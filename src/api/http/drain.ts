import type { FastifyInstance } from 'fastify';

/** Timeouts of the HTTP server: a client cannot hold a connection by sending slowly. */
export const SERVER_TIMEOUTS = {
  /** The request line and headers must arrive within this (slowloris). */
  headersMs: 20_000,
  /** A whole request, body included: a 100 MB import at 1 MB/s fits. */
  requestMs: 180_000,
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: 5_000,
};

/**
 * A graceful stop that always ends by its deadline: new connections are refused at once and the
 * requests in progress may finish; any still open at the deadline (a stalled upload, a client that
 * never reads its answer) are cut, so a SIGTERM never waits on a stranger's socket.
 */
export async function drainServer(app: FastifyInstance, deadlineMs: number): Promise<{ forced: boolean }> {
  const closed = app.close().then(() => true);
  if (await within(closed, deadlineMs)) return { forced: false };
  app.server.closeAllConnections();
  // Cut sockets end their requests at once; the close hooks get a moment more, and no longer.
  await within(closed, 1_000);
  return { forced: true };
}

async function within(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

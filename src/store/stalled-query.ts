import net from 'node:net';
import type pg from 'pg';

/**
 * Why this exists: when the network to a server is cut (a switch, a cable, a node partitioned away
 * by Patroni), packets are dropped and nothing answers with a reset. A statement sent then waits
 * for TCP to give up retransmitting: about 15 minutes on Linux (net.ipv4.tcp_retries2 = 15), and
 * Node cannot set TCP_USER_TIMEOUT per socket. Keepalive does not help a connection with unanswered
 * data, and a plain statement deadline would also kill the slow statements that are legitimate
 * (a migration, an index build, an advisory lock that waits for its holder).
 *
 * So a statement that has had no answer for `checkAfterMs` asks whether its server is still there:
 * a NEW connection to the same host and port sends a PostgreSQL SSLRequest, which any server
 * answers with one byte before authentication (PostgreSQL protocol, 55.2.10). An answer within
 * `probeTimeoutMs` means the server is up and the statement is merely slow: asked again after
 * `checkAfterMs`. No answer (a timeout, a refusal, a reset) means the server is gone for us: the
 * connection is destroyed, the statement fails with ETIMEDOUT, a lost connection that transient.ts
 * knows, and the pool drops that client. The caller's retry then finds the new primary
 * (pg-failover.ts). A COMMIT failed this way may have committed: callers already treat a lost
 * COMMIT answer as "maybe" (docs/operations.md, "Replication and failover").
 * These are deadlines on real sockets, so they run on real time (as pg's own connect timeout
 * does), not on the injected Clock.
 */
export interface StallOptions {
  /** How long a statement waits for an answer before its server is probed. */
  checkAfterMs: number;
  /** How long the probe waits for the server's one-byte answer. */
  probeTimeoutMs: number;
}

export const DEFAULT_STALL: StallOptions = { checkAfterMs: 5_000, probeTimeoutMs: 3_000 };

/** The 8-byte SSLRequest: length 8, code 80877103 (PostgreSQL protocol, 55.7). */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** Does a server answer at host:port within timeoutMs? (an SSLRequest's one byte, S or N) */
export function serverAnswers(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (ok: boolean) => {
      clearTimeout(t);
      s.destroy();
      resolve(ok);
    };
    const t = setTimeout(() => done(false), timeoutMs);
    t.unref();
    s.once('connect', () => s.write(SSL_REQUEST));
    s.once('data', (b: Buffer) => done(b[0] === 0x53 || b[0] === 0x4e));
    s.once('error', () => done(false));
    s.once('close', () => done(false));
  });
}

/**
 * Watches every statement of client `c` as described above; the watch ends with the client. A
 * client on a Unix socket is left alone: no network lies between it and its server.
 * onServerGone: the server was found gone (after this client's socket was destroyed), so that the
 * caller can drop the other connections to it at once rather than each after its own wait.
 */
export function watchStalledQueries(c: pg.Client | pg.PoolClient, o: StallOptions = DEFAULT_STALL, onServerGone?: () => void): void {
  const { host, port } = c as unknown as { host: string; port: number };
  if (!host || host.startsWith('/')) return;
  const query = c.query.bind(c) as (...a: unknown[]) => unknown;
  (c as { query: unknown }).query = (...a: unknown[]) => {
    const r = query(...a);
    if (!(r instanceof Promise)) return r;
    let settled = false;
    let timer: NodeJS.Timeout | null = null;
    const check = () => {
      timer = setTimeout(() => {
        void serverAnswers(host, port, o.probeTimeoutMs).then((up) => {
          if (settled) return;
          if (up) return check();
          const e = Object.assign(new Error(`connection to PostgreSQL at ${host}:${port} lost: a statement had no answer for ${o.checkAfterMs} ms and the server does not answer a new connection (network cut?)`), { code: 'ETIMEDOUT' });
          destroySocket(c, e);
          onServerGone?.();
        });
      }, o.checkAfterMs);
      timer.unref();
    };
    check();
    const stop = () => {
      settled = true;
      if (timer) clearTimeout(timer);
    };
    r.then(stop, stop);
    return r;
  };
}

/** node-postgres keeps the socket at client.connection.stream; destroying it fails what is pending. */
export function destroySocket(c: pg.ClientBase, e: Error): void {
  const stream = (c as unknown as { connection?: { stream?: net.Socket } }).connection?.stream;
  stream?.destroy(e);
}

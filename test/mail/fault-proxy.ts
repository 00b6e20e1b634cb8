import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 between an SMTP client (Cadenza) and a real SMTP server (the test bed's
 * Postfix), that breaks the session at the one moment that matters for at-most-once: around the
 * DATA terminator (CRLF.CRLF, RFC 5321 4.1.1.4). It only works on plaintext SMTP, so the client
 * must not use STARTTLS through it (security 'none').
 *
 * Modes (setMode applies to connections opened afterwards):
 *   pass                    forwards everything.
 *   drop_after_terminator   forwards the message with its terminator; when the server's reply to
 *                           it (the 250) arrives, swallows it, destroys the client's socket and
 *                           closes the server side: the server queued the message, the client
 *                           never hears so (recipe: delivered, about 70 ms later).
 *   drop_before_terminator  forwards the message up to, not including, its terminator, then
 *                           destroys both sockets: the server discards the message (Postfix logs
 *                           "lost connection after DATA"); the client has written the terminator
 *                           and cannot tell this from the case above.
 *   drop_in_body            destroys both sockets when the first message bytes after the 354
 *                           arrive: a connection lost while the client is still writing (a large
 *                           message), terminator not yet written.
 *   delay                   holds each server→client chunk for `ms` (`only: 'final_reply'`: only
 *                           the reply to the terminator): timeouts against a real server.
 * The two terminator drops take `fromMessage` (default 1): on a connection that carries several
 * messages (a kept connection), the first messages before it pass.
 * cut() destroys every open connection now (a server closing idle sessions); freeze() makes every
 * open connection silent both ways without closing it (a peer gone without a FIN).
 *
 * The proxy counts what it saw (`stats`) and `waitFor()` resolves when a count is reached, so that
 * tests wait for events, not for time. close() destroys every socket and clears every timer.
 */
export type FaultMode =
  | { kind: 'pass' }
  | { kind: 'drop_after_terminator'; fromMessage?: number }
  | { kind: 'drop_before_terminator'; fromMessage?: number }
  | { kind: 'drop_in_body' }
  | { kind: 'delay'; ms: number; only?: 'final_reply' };

export interface FaultStats {
  connections: number;
  /** DATA terminators seen from the client. */
  terminators: number;
  /** Connections the proxy broke on purpose. */
  dropped: number;
  /** Final replies (to the terminator) swallowed. */
  swallowedReplies: number;
}

export interface FaultProxy {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly stats: Readonly<FaultStats>;
  setMode(mode: FaultMode): void;
  /** Destroys every connection open now, both sides. */
  cut(): void;
  /** Every connection open now forwards nothing more, either way, and stays open. */
  freeze(): void;
  /** Resolves once stats[key] >= n (rejects after timeoutMs). */
  waitFor(key: keyof FaultStats, n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const TERMINATOR = Buffer.from('\r\n.\r\n');

export async function startFaultProxy(target: { host: string; port: number }, initial: FaultMode = { kind: 'pass' }): Promise<FaultProxy> {
  let mode = initial;
  const stats: FaultStats = { connections: 0, terminators: 0, dropped: 0, swallowedReplies: 0 };
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const waiters: Array<{ key: keyof FaultStats; n: number; resolve: () => void }> = [];
  const bump = (key: keyof FaultStats) => {
    stats[key]++;
    for (const w of [...waiters]) {
      if (stats[w.key] >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  const frozen = new WeakSet<net.Socket>();
  const server = net.createServer((client) => {
    const connMode = mode;
    let messages = 0;
    const dropsNow = () => messages >= (('fromMessage' in connMode ? connMode.fromMessage : undefined) ?? 1);
    bump('connections');
    const upstream = net.connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    const forget = (s: net.Socket) => () => sockets.delete(s);
    client.on('close', forget(client));
    upstream.on('close', forget(upstream));
    const kill = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', kill);
    upstream.on('error', kill);
    client.on('close', () => upstream.end());
    upstream.on('close', () => client.destroy());

    // Client → server: find the terminator once the server has said 354 to DATA. The bytes that
    // came before are carried over (up to 4) so a terminator split across chunks is still seen;
    // the message starts after a virtual CRLF, so an empty body's ".\r\n" counts too.
    let inData = false;
    let tail = Buffer.alloc(0);
    let afterTerminator = false;
    client.on('data', (chunk: Buffer) => {
      if (frozen.has(client)) return;
      if (!inData || afterTerminator) {
        upstream.write(chunk);
        return;
      }
      if (connMode.kind === 'drop_in_body') {
        bump('dropped');
        kill();
        return;
      }
      const joined = Buffer.concat([tail, chunk]);
      const at = joined.indexOf(TERMINATOR);
      if (at === -1) {
        upstream.write(chunk);
        tail = joined.subarray(Math.max(0, joined.length - 4));
        return;
      }
      bump('terminators');
      messages++;
      // Index of the terminator inside this chunk (it may begin in the carried-over tail).
      const cut = at - tail.length;
      if (connMode.kind === 'drop_before_terminator' && dropsNow()) {
        if (cut > 0) upstream.write(chunk.subarray(0, cut));
        bump('dropped');
        // Let the bytes before the terminator reach the server, then cut both sides.
        upstream.end(() => kill());
        client.destroy();
        return;
      }
      afterTerminator = true;
      inData = false;
      upstream.write(chunk);
    });

    // Server → client: watch for the 354 and for the reply to the terminator.
    let lineBuf = '';
    upstream.on('data', (chunk: Buffer) => {
      if (frozen.has(client)) return;
      if (afterTerminator && !inData) {
        // This is the final reply (250 queued, or 4xx/5xx).
        if (connMode.kind === 'drop_after_terminator' && dropsNow()) {
          bump('swallowedReplies');
          bump('dropped');
          client.destroy();
          upstream.end();
          return;
        }
        afterTerminator = false;
        tail = Buffer.alloc(0);
        if (connMode.kind === 'delay') {
          later(connMode.ms, () => client.write(chunk));
          return;
        }
        client.write(chunk);
        return;
      }
      lineBuf = (lineBuf + chunk.toString('latin1')).slice(-512);
      if (/(^|\r\n)354[ -][^\r\n]*\r\n$/.test(lineBuf)) {
        inData = true;
        tail = Buffer.from('\r\n');
        lineBuf = '';
      }
      if (connMode.kind === 'delay' && connMode.only !== 'final_reply') later(connMode.ms, () => client.write(chunk));
      else client.write(chunk);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    host: '127.0.0.1',
    port,
    stats,
    setMode(m) {
      mode = m;
    },
    cut() {
      for (const s of sockets) s.destroy();
    },
    freeze() {
      for (const s of sockets) frozen.add(s);
    },
    waitFor(key, n, timeoutMs = 10_000) {
      if (stats[key] >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const w = {
          key,
          n,
          resolve: () => {
            clearTimeout(t);
            timers.delete(t);
            resolve();
          },
        };
        const t = setTimeout(() => {
          timers.delete(t);
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`fault proxy: ${key} stayed at ${stats[key]} (wanted ${n}) for ${timeoutMs} ms`));
        }, timeoutMs);
        timers.add(t);
        waiters.push(w);
      });
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

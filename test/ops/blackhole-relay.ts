import net from 'node:net';

/**
 * A TCP relay on 127.0.0.1 in front of a real server that can black-hole: after blackhole(), every
 * connection, open or new, forwards nothing either way and is never closed, and a new connection
 * is accepted but never answered. That is what a client sees of a network cut (packets dropped, no
 * reset), without namespaces; patroni-cluster.sh's `cut` is the real one. restore() forwards again
 * on new connections only: the ones that were cut stay silent, as a peer that gave up on them
 * would. close() destroys every socket.
 */
export interface BlackholeRelay {
  readonly port: number;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startBlackholeRelay(target: { host: string; port: number }): Promise<BlackholeRelay> {
  const sockets = new Set<net.Socket>();
  const frozen = new WeakSet<net.Socket>();
  let holed = false;
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  };
  const server = net.createServer((client) => {
    track(client);
    if (holed) {
      frozen.add(client); // accepted, never answered
      return;
    }
    const upstream = net.connect(target);
    track(upstream);
    const forward = (from: net.Socket, to: net.Socket) => {
      from.on('data', (b: Buffer) => void (frozen.has(from) || to.write(b)));
      // A close is forwarded only while the path is up: a cut path carries no FIN either.
      from.on('close', () => void (frozen.has(from) || to.destroy()));
    };
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    blackhole() {
      holed = true;
      for (const s of sockets) frozen.add(s);
    },
    restore() {
      holed = false;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

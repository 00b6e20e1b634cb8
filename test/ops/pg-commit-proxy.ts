import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real PostgreSQL that loses a COMMIT's answer: the moment
 * where a client cannot tell "committed" from "not committed" (a primary dying, a network cut).
 * It reads the frontend protocol (PostgreSQL 55.7: after the startup packet, each message is a
 * type byte and an int32 length) to find a simple Query whose text is COMMIT (how node-postgres
 * and Kysely send it). The server must not be asked for TLS (pg without `ssl` never asks).
 *
 * Modes (arm() applies to the next COMMIT on any connection, once):
 *   cut_after_commit    forwards the COMMIT; when the server's answer arrives, swallows it and
 *                       destroys both sockets: committed, and the client never hears so.
 *   cut_before_commit   destroys both sockets instead of forwarding the COMMIT: the server rolls
 *                       the transaction back; the client sees the same lost connection.
 * `cuts` counts the COMMITs cut. close() destroys every socket.
 */
export type CommitFault = 'cut_after_commit' | 'cut_before_commit';

export class PgCommitProxy {
  private server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private armed: CommitFault | null = null;
  cuts = 0;
  port = 0;

  constructor(
    private readonly target: { host: string; port: number },
  ) {
    this.server = net.createServer((client) => this.pipe(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  arm(fault: CommitFault): void {
    this.armed = fault;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: net.Socket): void {
    const server = net.connect(this.target.port, this.target.host);
    this.sockets.add(client).add(server);
    const cut = () => {
      client.destroy();
      server.destroy();
    };
    client.on('close', () => this.sockets.delete(client) && server.end());
    server.on('close', () => this.sockets.delete(server) && client.end());
    client.on('error', cut);
    server.on('error', cut);

    let buf = Buffer.alloc(0);
    let started = false;
    let cutOnAnswer = false;
    server.on('data', (d: Buffer) => {
      if (cutOnAnswer) {
        cut();
        return;
      }
      client.write(d);
    });
    client.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        // The startup packet has no type byte: int32 length, then the rest.
        const head = started ? 5 : 4;
        if (buf.length < head) return;
        const len = started ? buf.readInt32BE(1) + 1 : buf.readInt32BE(0);
        if (buf.length < len) return;
        const msg = buf.subarray(0, len);
        buf = buf.subarray(len);
        const fault = started && msg[0] === 0x51 && this.armed && /^\s*commit\b/i.test(msg.subarray(5).toString('utf8')) ? this.armed : null;
        started = true;
        if (fault) {
          this.armed = null;
          this.cuts++;
          if (fault === 'cut_before_commit') {
            cut();
            return;
          }
          cutOnAnswer = true;
        }
        server.write(msg);
      }
    });
  }
}

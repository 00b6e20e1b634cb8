import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { CompiledQuery } from 'kysely';
import type { Db, Store } from '../store.ts';
import { newToken, removeEndpoint, writeEndpoint } from './endpoint.ts';
import { decodeValue, encodeError, encodeValue, frame, FrameReader } from './wire.ts';

/**
 * The embedded store of a running server, served to the `cadenza` commands run beside it.
 *
 * PGlite is a database inside one process: while `cadenza start` holds the folder, another process
 * cannot open it (embedded-lock.ts). So the server lends its store instead: a command connects to
 * a loopback port named in `<folder>.endpoint`, proves it read the token there, and runs its own
 * code with its queries executed here, on the server's connections, in the server's turn. Every
 * command keeps one implementation, whichever way its store is reached (remote/client.ts).
 *
 * A command's connection is a lease on the whole embedded database while it holds it, so a lease
 * left idle (a command stopped with Ctrl-Z, a hung client) is rolled back and taken back after
 * `idleMs`; a session that closes gives back what it held the same way.
 *
 * Protocol: newline-delimited JSON, requests `{ id, t, … }` answered `{ id, ok, … }`:
 *   hello(token) → backend; acquire → conn; query(conn, sql, params) → rows, numAffectedRows;
 *   release(conn); script(text) (migrations); nudge(work) (work due now, as the API's nudges).
 */
export interface StoreEndpointOptions {
  store: Store;
  /** The embedded folder; the endpoint file is written beside it. */
  dbDir: string;
  /** Work a command made due now (cli/context.ts nudgeRunning). */
  nudge?: (work: string) => void;
  idleMs?: number;
  helloMs?: number;
  maxFrameBytes?: number;
  onError?: (e: unknown) => void;
}

export interface StoreEndpoint {
  port: number;
  close(): Promise<void>;
}

interface Lease {
  db: Db;
  release(): void;
  idle?: NodeJS.Timeout;
}

type Request = { id: number; t: string; token?: string; conn?: number; sql?: string; params?: unknown[]; script?: string; work?: string };

export async function serveStoreEndpoint(o: StoreEndpointOptions): Promise<StoreEndpoint> {
  const token = newToken();
  const idleMs = o.idleMs ?? 30_000;
  const sessions = new Set<Session>();
  let closing = false;

  class Session {
    private authed = false;
    private readonly leases = new Map<number, Lease>();
    private nextConn = 1;
    // Before the token, a frame of a few hundred bytes is all a hello needs.
    private readonly reader = new FrameReader(4096);
    private readonly hello: NodeJS.Timeout;

    constructor(private readonly socket: Socket) {
      this.hello = setTimeout(() => this.end(), o.helloMs ?? 5_000);
      socket.on('data', (chunk: Buffer) => {
        let frames: unknown[];
        try {
          frames = this.reader.push(chunk);
        } catch {
          this.end();
          return;
        }
        for (const f of frames) void this.handle(f as Request);
      });
      socket.on('close', () => this.end());
      socket.on('error', () => this.end());
    }

    private send(msg: unknown): void {
      if (!this.socket.destroyed) this.socket.write(frame(msg));
    }

    private async handle(r: Request): Promise<void> {
      if (!this.authed) {
        if (r.t !== 'hello' || typeof r.token !== 'string' || !sameToken(r.token, token)) return this.end();
        this.authed = true;
        this.reader.maxBytes = o.maxFrameBytes ?? 32 * 1024 * 1024;
        clearTimeout(this.hello);
        return this.send({ id: r.id, ok: true, backend: o.store.backend });
      }
      try {
        this.send({ id: r.id, ok: true, ...(await this.run(r)) });
      } catch (e) {
        this.send({ id: r.id, ok: false, error: encodeError(e) });
      }
    }

    private async run(r: Request): Promise<Record<string, unknown>> {
      switch (r.t) {
        case 'acquire':
          return { conn: await this.acquire() };
        case 'query': {
          const lease = this.lease(r.conn);
          // A query that runs long is not idleness: the clock starts again when it ends.
          clearTimeout(lease.idle);
          try {
            const res = await lease.db.executeQuery(CompiledQuery.raw(String(r.sql), decodeValue(r.params ?? []) as unknown[]));
            return { rows: encodeValue(res.rows), ...(res.numAffectedRows !== undefined ? { numAffectedRows: res.numAffectedRows.toString() } : {}) };
          } finally {
            if (this.leases.get(r.conn!) === lease) this.touch(r.conn!, lease);
          }
        }
        case 'release':
          this.giveBack(r.conn!, false);
          return {};
        case 'script':
          await o.store.runScript(String(r.script));
          return {};
        case 'nudge':
          o.nudge?.(String(r.work));
          return {};
        default:
          throw new Error(`unknown request '${r.t}'`);
      }
    }

    private lease(conn: number | undefined): Lease {
      const l = conn === undefined ? undefined : this.leases.get(conn);
      if (!l) throw new Error(`connection ${conn} is not held (released, or taken back after ${idleMs} ms idle)`);
      return l;
    }

    private touch(conn: number, l: Lease): void {
      clearTimeout(l.idle);
      l.idle = setTimeout(() => {
        this.giveBack(conn, true);
        this.end();
      }, idleMs);
    }

    private acquire(): Promise<number> {
      const conn = this.nextConn++;
      return new Promise<number>((acquired, failed) => {
        o.store.db
          .connection()
          .execute(async (db) => {
            await new Promise<void>((release) => {
              if (this.socket.destroyed) return release();
              const lease: Lease = { db, release };
              this.leases.set(conn, lease);
              this.touch(conn, lease);
              acquired(conn);
            });
          })
          .catch((e: unknown) => failed(e));
        // A session gone before its turn came: the lease is given back as soon as it is granted.
      });
    }

    /** Gives a lease back; `abandoned` rolls back whatever transaction it left open. */
    private giveBack(conn: number, abandoned: boolean): void {
      const l = this.leases.get(conn);
      if (!l) return;
      this.leases.delete(conn);
      clearTimeout(l.idle);
      if (!abandoned) return l.release();
      l.db
        .executeQuery(CompiledQuery.raw('rollback'))
        .catch(() => undefined)
        .finally(() => l.release());
    }

    end(): void {
      clearTimeout(this.hello);
      for (const conn of [...this.leases.keys()]) this.giveBack(conn, true);
      sessions.delete(this);
      this.socket.destroy();
    }
  }

  const server: Server = createServer((socket) => {
    if (closing) return socket.destroy();
    sessions.add(new Session(socket));
  });
  server.on('error', (e) => o.onError?.(e));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  writeEndpoint(o.dbDir, { pid: process.pid, host: '127.0.0.1', port, token });
  return {
    port,
    async close() {
      closing = true;
      removeEndpoint(o.dbDir);
      for (const s of [...sessions]) s.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

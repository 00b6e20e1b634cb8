import { connect, type Socket } from 'node:net';
import { Kysely, type CompiledQuery, type DatabaseConnection, type QueryResult } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import type { Database } from '../schema.ts';
import { postgresSqlDialect, SqlTransactionDriver } from '../sql-transaction-driver.ts';
import type { Backend, Store } from '../store.ts';
import type { Endpoint } from './endpoint.ts';
import { decodeError, decodeValue, encodeValue, frame, FrameReader, type WireError } from './wire.ts';

/**
 * A Store whose queries run in the server that holds the embedded folder (remote/server.ts): the
 * command's own code, its files, its terminal and its environment stay in the command's process;
 * only the SQL travels. Kysely runs on it as on any store, transactions included (a connection is
 * the server's lease, held from acquire to release).
 */
export interface RemoteStore extends Store {
  /** Tells the server that work of this kind is due now (its scheduler, senders and sync act at once). */
  nudge(work: string): Promise<void>;
}

type Reply = { id: number; ok: boolean; error?: WireError } & Record<string, unknown>;

class Channel {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private closedWith: Error | undefined;

  constructor(private readonly socket: Socket) {
    const reader = new FrameReader(256 * 1024 * 1024);
    socket.on('data', (chunk: Buffer) => {
      for (const f of reader.push(chunk)) {
        const r = f as Reply;
        const w = this.waiting.get(r.id);
        this.waiting.delete(r.id);
        if (!w) continue;
        if (r.ok) w.resolve(r);
        else w.reject(r.error ? decodeError(r.error) : new Error('the server refused the request'));
      }
    });
    const lost = () => this.fail(cadenzaError('STORE_UNAVAILABLE', 'the running Cadenza server closed the connection to its store while this command ran (it stopped, or the command held the store idle too long); run the command again'));
    socket.on('close', lost);
    socket.on('error', lost);
  }

  private fail(e: Error): void {
    this.closedWith ??= e;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
  }

  request(msg: Record<string, unknown>): Promise<Reply> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.write(frame({ id, ...msg }));
    });
  }

  close(): void {
    this.closedWith ??= new Error('closed');
    this.socket.end();
  }
}

class RemoteConnection implements DatabaseConnection {
  constructor(
    private readonly channel: Channel,
    readonly conn: number,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const r = await this.channel.request({ t: 'query', conn: this.conn, sql: compiled.sql, params: encodeValue(compiled.parameters) });
    return {
      rows: decodeValue(r.rows) as R[],
      ...(typeof r.numAffectedRows === 'string' ? { numAffectedRows: BigInt(r.numAffectedRows) } : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('remote store: streaming queries are not supported; page with keyset queries instead');
  }
}

class RemoteDriver extends SqlTransactionDriver {
  constructor(private readonly channel: Channel) {
    super();
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    const r = await this.channel.request({ t: 'acquire' });
    return new RemoteConnection(this.channel, r.conn as number);
  }
  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    await this.channel.request({ t: 'release', conn: (conn as RemoteConnection).conn }).catch(() => undefined);
  }
  async destroy(): Promise<void> {
    this.channel.close();
  }
}

export async function connectRemoteStore(e: Endpoint, opts: { timeoutMs?: number } = {}): Promise<RemoteStore> {
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: e.host, port: e.port });
    const timer = setTimeout(() => s.destroy(new Error('no answer')), opts.timeoutMs ?? 5_000);
    s.once('connect', () => {
      clearTimeout(timer);
      resolve(s);
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  }).catch((err: Error) => {
    throw cadenzaError('STORE_UNAVAILABLE', `the embedded database is held by process ${e.pid}, which publishes a store endpoint on 127.0.0.1:${e.port}, but that endpoint does not answer (${err.message})`, { holder: e.pid });
  });
  const channel = new Channel(socket);
  const hello = await channel.request({ t: 'hello', token: e.token });
  const db = new Kysely<Database>({ dialect: postgresSqlDialect(() => new RemoteDriver(channel)) });
  return {
    backend: hello.backend as Backend,
    db,
    async runScript(script) {
      await channel.request({ t: 'script', script });
    },
    // The server's embedded store has one session: its queries already take turns.
    async withExclusiveLock(_key, fn) {
      return fn();
    },
    async nudge(work) {
      await channel.request({ t: 'nudge', work });
    },
    async close() {
      await db.destroy();
    },
  };
}

export function isRemoteStore(s: Store): s is RemoteStore {
  return typeof (s as Partial<RemoteStore>).nudge === 'function';
}

import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Store } from '../store/store.ts';

/**
 * Process crashes for the simulation, injected at the database boundary.
 *
 * A process that dies in the middle of a transaction leaves nothing of it: the server rolls it
 * back. The simulation reproduces exactly that by throwing SimCrash from a Kysely plugin just
 * before the n-th statement from now: the transaction callback throws, Kysely rolls back, and the
 * simulation throws away every in-memory object of the "process" (service, scheduler, claims) and
 * starts a fresh one, as a restart would. Statements are counted, not timed, so the crash point is
 * a pure function of the seed.
 */
export class SimCrash extends Error {
  readonly code = 'SIM_CRASH';
  constructor(readonly where: string) {
    super(`simulated crash (${where})`);
    this.name = 'SimCrash';
  }
}

export function isSimCrash(e: unknown): e is SimCrash {
  return e instanceof SimCrash;
}

export class CrashPlugin implements KyselyPlugin {
  /** Statements this plugin has seen. */
  statements = 0;
  /** Of which writes (the simulation re-reads the store only after a step that wrote). */
  writes = 0;
  private countdown = 0;
  private where = '';
  private when: ((node: RootOperationNode) => boolean) | undefined;

  /** The n-th statement from now (1 = the next) throws SimCrash instead of running. */
  armAfter(n: number, where: string): void {
    this.countdown = Math.max(1, Math.floor(n));
    this.where = where;
    this.when = undefined;
  }

  /** The first statement matching pred throws SimCrash instead of running (tests). */
  armWhen(pred: (node: RootOperationNode) => boolean, where: string): void {
    this.when = pred;
    this.where = where;
    this.countdown = 0;
  }

  disarm(): void {
    this.countdown = 0;
    this.when = undefined;
  }

  get armed(): boolean {
    return this.countdown > 0 || this.when !== undefined;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.statements++;
    if (isWrite(args.node)) this.writes++;
    if (this.when?.(args.node)) {
      this.when = undefined;
      throw new SimCrash(this.where);
    }
    if (this.countdown > 0 && --this.countdown === 0) throw new SimCrash(this.where);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** The same store seen through the crash plugin: what the simulated process uses. */
export function crashingStore(store: Store, plugin: CrashPlugin): Store {
  return { ...store, db: store.db.withPlugin(plugin) };
}

type Node = { kind: string };

/** The table an INSERT node writes ('' when it has none). */
function insertTable(node: Node): string {
  return (node as { into?: { table?: { identifier?: { name?: string } } } }).into?.table?.identifier?.name ?? '';
}

/**
 * The text of a raw `sql` statement with the statements and fragments nested in it (a `with …`
 * whose writes are raw statements of their own, store/one-statement.ts), so that a write inside a
 * CTE is seen; a nested query built with Kysely reads as its verb (and an INSERT's table), any
 * other node as `?`.
 */
function rawText(node: Node): string {
  if (node.kind === 'InsertQueryNode') return ` insert into ${insertTable(node)} `;
  if (node.kind === 'UpdateQueryNode') return ' update ? set ';
  if (node.kind === 'DeleteQueryNode') return ' delete from ? ';
  if (node.kind !== 'RawNode') return ' ? ';
  const { sqlFragments, parameters } = node as unknown as { sqlFragments: readonly string[]; parameters: readonly Node[] };
  return sqlFragments.map((f, i) => f + (i < parameters.length ? rawText(parameters[i]!) : '')).join('');
}

/** True for a statement that writes (INSERT, UPDATE, DELETE, TRUNCATE, also inside a CTE), built or raw. */
export function isWrite(node: RootOperationNode): boolean {
  if (node.kind === 'InsertQueryNode' || node.kind === 'UpdateQueryNode' || node.kind === 'DeleteQueryNode') return true;
  if (node.kind !== 'RawNode') return false;
  const text = rawText(node);
  // A write at the top, or a data-modifying CTE (`w0 as (update …)`).
  return /^\s*(insert|update|delete|truncate)\b/i.test(text) || /\bas\s*\(\s*(insert|update|delete)\b/i.test(text);
}

/**
 * True for an INSERT into the named table, built or raw, also where it is one CTE of a larger
 * statement (a predicate for CrashPlugin.armWhen: the crash comes before the whole statement).
 */
export function insertInto(table: string): (node: RootOperationNode) => boolean {
  const raw = new RegExp(`\\binsert\\s+into\\s+"?${table}"?(\\s|\\()`, 'i');
  return (node) => {
    if (node.kind === 'InsertQueryNode') return insertTable(node) === table;
    return node.kind === 'RawNode' && raw.test(rawText(node));
  };
}

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

/** The leading text of a raw `sql` statement ('' for builder queries). */
function rawText(node: RootOperationNode): string {
  if (node.kind !== 'RawNode') return '';
  return (node as unknown as { sqlFragments: readonly string[] }).sqlFragments[0] ?? '';
}

/** True for a statement that writes (INSERT, UPDATE, DELETE, TRUNCATE), built or raw. */
export function isWrite(node: RootOperationNode): boolean {
  if (node.kind === 'InsertQueryNode' || node.kind === 'UpdateQueryNode' || node.kind === 'DeleteQueryNode') return true;
  return /^\s*(insert|update|delete|truncate)\b/i.test(rawText(node));
}

/** True for an INSERT into the named table, built or raw (a predicate for CrashPlugin.armWhen). */
export function insertInto(table: string): (node: RootOperationNode) => boolean {
  const raw = new RegExp(`^\\s*insert\\s+into\\s+${table}\\b`, 'i');
  return (node) => {
    if (node.kind === 'RawNode') return raw.test(rawText(node));
    if (node.kind !== 'InsertQueryNode') return false;
    const into = (node as { into?: { table?: { identifier?: { name?: string } } } }).into;
    return into?.table?.identifier?.name === table;
  };
}

/**
 * Who changed a Twenty record, in the words of CrmContact.updatedBy. Twenty stamps every record
 * with the ACTOR composite `updatedBy` {source, workspaceMemberId, name, context}: a member working
 * in the app has their workspaceMemberId; an API key has none, only source 'API' and the key's name
 * (build-created-by-from-api-key.util.ts). So a member is `member:<workspaceMemberId>` and anything
 * else `<source>:<name>` lower-cased, e.g. `api:cadenza`: the form integrationUserId() answers for
 * the connection's own key, so that the sync can tell its own writes apart.
 *
 * Two API keys with the same name are the same actor to Twenty's stamp, and so to Cadenza: the
 * connection's key should have a name of its own (the setup says so).
 */
export interface TwentyActor {
  source?: unknown;
  workspaceMemberId?: unknown;
  name?: unknown;
}

export function actorKey(actor: unknown): string | null {
  if (typeof actor !== 'object' || actor === null) return null;
  const a = actor as TwentyActor;
  if (typeof a.workspaceMemberId === 'string' && a.workspaceMemberId !== '') return `member:${a.workspaceMemberId}`;
  if (typeof a.source !== 'string') return null;
  return `${a.source.toLowerCase()}:${typeof a.name === 'string' ? a.name.toLowerCase() : ''}`;
}

/** The key for an API key called `name`. */
export function apiKeyActorKey(name: string): string {
  return `api:${name.toLowerCase()}`;
}

/**
 * The connection's own actor, learned from what Twenty stamps on a record this connection just
 * wrote (a PATCH answer's updatedBy, a create answer's createdBy): Twenty has no REST call that
 * names the calling API key, so until the first write, only a configured key name tells.
 */
export class OwnActor {
  private learned: string | null = null;

  constructor(private readonly configuredName?: string) {}

  get(): string | null {
    return this.configuredName ? apiKeyActorKey(this.configuredName) : this.learned;
  }

  /** From a record this connection wrote just now, with `field` the actor it stamped. */
  learnFrom(record: Record<string, unknown>, field: 'updatedBy' | 'createdBy'): void {
    const a = record[field] as TwentyActor | undefined;
    if (a && a.source === 'API') this.learned = actorKey(a);
  }
}

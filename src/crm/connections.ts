import { sql } from 'kysely';
import { cadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import type { Db } from '../store/store.ts';
import type { CrmKind } from './connector.ts';
import { CRM_ACTIVITY_KINDS } from './kinds.ts';

/**
 * A workspace's CRM connections (0054_crm.sql crm_connection): made by an admin with the CRM's API
 * token, which is sealed with the workspace's data key at once and opened only by the writer
 * (connectorFor); shown with their sync status, never with the token.
 */
export { CRM_ACTIVITY_KINDS, CRM_KINDS, DEFAULT_BASE_URLS } from './kinds.ts';

export interface TokenSealer {
  seal(workspaceId: string, context: string, plaintext: string): Promise<Buffer>;
  open(workspaceId: string, context: string, sealed: Buffer): Promise<string>;
}

/** The associated data the token is sealed under: a sealed token moved to another connection does not open. */
export const tokenContext = (connectionId: string) => `crm:${connectionId}`;

export interface ConnectionView {
  id: string;
  kind: CrmKind;
  baseUrl: string;
  activities: string[];
  state: 'active' | 'paused';
  pausedReason: string | null;
  preparedAt: string | null;
  createdAt: string;
  outbox: { pending: number; written: number; skipped: number; rejected: number };
  /** The most recent error of an activity still pending or rejected, for the status screen. */
  lastError: string | null;
  lastWrittenAt: string | null;
  /** Changes in (change-reader.ts): where the reader stands. */
  changes: {
    /** When the cursor last advanced (null: never read). */
    cursorAt: string | null;
    /** The newest CRM change read. */
    lastChangeAt: string | null;
    /** The reader's last failure, until a round succeeds. */
    readError: string | null;
    /** Mirrored contacts, and conflicts logged. */
    contacts: number;
    conflicts: number;
  };
}

export async function createConnection(
  d: { db: Db; random: Random; now: number; sealer: TokenSealer },
  input: { workspaceId: string; kind: CrmKind; baseUrl: string; token: string; activities?: readonly string[] },
): Promise<string> {
  const activities = [...new Set(input.activities ?? CRM_ACTIVITY_KINDS)];
  const unknown = activities.filter((a) => !(CRM_ACTIVITY_KINDS as readonly string[]).includes(a));
  if (unknown.length) throw cadenzaError('INVALID_INPUT', `not activity kinds: ${unknown.join(', ')} (${CRM_ACTIVITY_KINDS.join(', ')})`, { field: 'activities' });
  const id = newId(d.now, d.random);
  try {
    await d.db
      .insertInto('crm_connection')
      .values({ id, workspace_id: input.workspaceId, kind: input.kind, base_url: input.baseUrl, credentials: await d.sealer.seal(input.workspaceId, tokenContext(id), input.token), activities })
      .execute();
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw cadenzaError('CONFLICT', `this workspace is already connected to ${input.kind}: change or remove that connection`);
    throw e;
  }
  return id;
}

export async function listConnections(db: Db, workspaceId: string, connectionId?: string): Promise<ConnectionView[]> {
  const r = await sql<{
    id: string;
    kind: CrmKind;
    base_url: string;
    activities: string[];
    state: 'active' | 'paused';
    paused_reason: string | null;
    prepared_at: Date | null;
    created_at: Date;
    pending: string;
    written: string;
    skipped: string;
    rejected: string;
    last_error: string | null;
    last_written_at: Date | null;
    change_cursor_at: Date | null;
    last_change_at: Date | null;
    read_error: string | null;
    contacts: string;
    conflicts: string;
  }>`
    select c.id, c.kind, c.base_url, c.activities, c.state, c.paused_reason, c.prepared_at, c.created_at,
           c.change_cursor_at, c.last_change_at, c.read_error,
           (select count(*) from crm_contact m where m.connection_id = c.id) as contacts,
           (select count(*) from crm_conflict k where k.connection_id = c.id) as conflicts,
           count(*) filter (where a.state = 'pending') as pending, count(*) filter (where a.state = 'written') as written,
           count(*) filter (where a.state = 'skipped') as skipped, count(*) filter (where a.state = 'rejected') as rejected,
           (select last_error from crm_activity x where x.connection_id = c.id and x.state in ('pending', 'rejected') and x.last_error is not null order by x.next_attempt_at desc limit 1) as last_error,
           max(a.written_at) as last_written_at
    from crm_connection c
    left join crm_activity a on a.connection_id = c.id
    where c.workspace_id = ${workspaceId} and (${connectionId ?? null}::uuid is null or c.id = ${connectionId ?? null}::uuid)
    group by c.id
    order by c.created_at`.execute(db);
  const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
  return r.rows.map((c) => ({
    id: c.id,
    kind: c.kind,
    baseUrl: c.base_url,
    activities: c.activities,
    state: c.state,
    pausedReason: c.paused_reason,
    preparedAt: iso(c.prepared_at),
    createdAt: iso(c.created_at)!,
    outbox: { pending: Number(c.pending), written: Number(c.written), skipped: Number(c.skipped), rejected: Number(c.rejected) },
    lastError: c.last_error,
    lastWrittenAt: iso(c.last_written_at),
    changes: { cursorAt: iso(c.change_cursor_at), lastChangeAt: iso(c.last_change_at), readError: c.read_error, contacts: Number(c.contacts), conflicts: Number(c.conflicts) },
  }));
}

/** Changes what a connection takes, resumes or pauses it, or replaces its token (which resumes it). */
export async function updateConnection(
  d: { db: Db; sealer: TokenSealer },
  workspaceId: string,
  connectionId: string,
  change: { activities?: readonly string[]; state?: 'active' | 'paused'; token?: string; baseUrl?: string },
): Promise<void> {
  const found = await d.db.selectFrom('crm_connection').select('id').where('id', '=', connectionId).where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!found) throw cadenzaError('NOT_FOUND', 'no such CRM connection in this workspace');
  const activities = change.activities ? [...new Set(change.activities)] : undefined;
  const unknown = (activities ?? []).filter((a) => !(CRM_ACTIVITY_KINDS as readonly string[]).includes(a));
  if (unknown.length) throw cadenzaError('INVALID_INPUT', `not activity kinds: ${unknown.join(', ')}`, { field: 'activities' });
  const state = change.token !== undefined ? 'active' : change.state;
  await d.db
    .updateTable('crm_connection')
    .set({
      ...(activities ? { activities } : {}),
      ...(state ? { state, paused_reason: state === 'active' ? null : 'paused by an admin' } : {}),
      // Resumed or given a new token: its webhooks are registered again (the old ones deleted first: webhooks/register.ts).
      ...(state === 'active' ? { hooks_registered_at: null } : {}),
      ...(change.token !== undefined ? { credentials: await d.sealer.seal(workspaceId, tokenContext(connectionId), change.token), prepared_at: null } : {}),
      ...(change.baseUrl !== undefined ? { base_url: change.baseUrl } : {}),
    })
    .where('id', '=', connectionId)
    .execute();
}

/**
 * An OAuth consent's outcome (oauth/flow.ts): the workspace's connection to that CRM gets the new
 * grant and address and is resumed (a re-authorization after a refused or revoked grant), or is
 * created when there is none.
 */
export async function connectOrReauthorize(
  d: { db: Db; random: Random; now: number; sealer: TokenSealer },
  input: { workspaceId: string; kind: CrmKind; baseUrl: string; token: string },
): Promise<{ id: string; created: boolean }> {
  const existing = await d.db.selectFrom('crm_connection').select('id').where('workspace_id', '=', input.workspaceId).where('kind', '=', input.kind).executeTakeFirst();
  if (existing) {
    await updateConnection(d, input.workspaceId, existing.id, { token: input.token, baseUrl: input.baseUrl });
    return { id: existing.id, created: false };
  }
  return { id: await createConnection(d, input), created: true };
}

/**
 * A refreshed OAuth credential (oauth/credential.ts), sealed again in place. Only while the
 * connection still holds `previous`: an admin's new token or a re-authorization that came in
 * between is not overwritten by a refresh of the old grant.
 */
export async function saveCredential(d: { db: Db; sealer: TokenSealer }, connectionId: string, previous: string, next: string): Promise<void> {
  const c = await d.db.selectFrom('crm_connection').select(['workspace_id', 'credentials']).where('id', '=', connectionId).executeTakeFirst();
  if (!c || (await d.sealer.open(c.workspace_id, tokenContext(connectionId), c.credentials)) !== previous) return;
  await d.db
    .updateTable('crm_connection')
    .set({ credentials: await d.sealer.seal(c.workspace_id, tokenContext(connectionId), next) })
    .where('id', '=', connectionId)
    .where('credentials', '=', c.credentials)
    .execute();
}

export async function deleteConnection(db: Db, workspaceId: string, connectionId: string): Promise<void> {
  const r = await db.deleteFrom('crm_connection').where('id', '=', connectionId).where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (Number(r.numDeletedRows) !== 1) throw cadenzaError('NOT_FOUND', 'no such CRM connection in this workspace');
}

/** The connection's kind, address and opened token: for the writer only. */
export async function openConnection(db: Db, sealer: TokenSealer, connectionId: string): Promise<{ workspaceId: string; kind: CrmKind; baseUrl: string; token: string; prepared: boolean }> {
  const c = await db.selectFrom('crm_connection').select(['workspace_id', 'kind', 'base_url', 'credentials', 'prepared_at']).where('id', '=', connectionId).executeTakeFirst();
  if (!c) throw cadenzaError('NOT_FOUND', 'no such CRM connection');
  return { workspaceId: c.workspace_id, kind: c.kind, baseUrl: c.base_url, token: await sealer.open(c.workspace_id, tokenContext(connectionId), c.credentials), prepared: c.prepared_at !== null };
}

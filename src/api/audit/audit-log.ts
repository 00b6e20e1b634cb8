import { sql } from 'kysely';
import type { Clock } from '../../common/clock.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { Db } from '../../store/store.ts';

/**
 * The workspace audit log (migration 0024): one row per security-relevant act. Append-only: this
 * file inserts and reads, and nothing in Cadenza updates or deletes a row except the retention
 * purge (retention.ts); on both backends a trigger refuses anything else.
 */
export const AUDIT_ACTIONS = [
  'signin.succeeded',
  'signin.failed',
  'member.added',
  'member.removed',
  'member.role_changed',
  'member.phone_number_changed',
  'api_key.created',
  'api_key.revoked',
  'invitation.sent',
  'invitation.accepted',
  'invitation.revoked',
  'mailbox.connected',
  'mailbox.removed',
  'export.downloaded',
  'settings.changed',
  'privacy.exported',
  'privacy.erased',
  'recording.played',
  'recording.deleted',
  'transcript.read',
  'transcript.requested',
  'crm.connected',
  'crm.changed',
  'crm.disconnected',
  'crm.settings_changed',
  'crm.list_enrolled',
  'suppression.lifted',
  'leads.bulk_stopped',
  'leads.bulk_deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditActor {
  kind: 'session' | 'api_key' | 'system' | 'anonymous';
  userId?: string | null;
  keyId?: string | null;
  /** As a person reads it: an address, a key's name and prefix, "Cadenza". */
  label: string;
  ip?: string | null;
}

export interface AuditEntry {
  workspaceId: string;
  action: AuditAction;
  actor: AuditActor;
  target?: string | null;
  detail?: Record<string, unknown>;
}

export const SYSTEM_ACTOR: AuditActor = { kind: 'system', label: 'Cadenza' };

/** Appends events; `db` may be a transaction, so an act and its record commit together. */
export async function recordAudit(db: Db, deps: { clock: Clock; random: Random }, ...entries: AuditEntry[]): Promise<void> {
  if (!entries.length) return;
  const now = deps.clock.now();
  // Ids of one instant order by their random part: sorted, they keep the batch's order in the list.
  const ids = entries.map(() => newId(now, deps.random)).sort();
  await db
    .insertInto('audit_event')
    .values(
      entries.map((e, i) => ({
        id: ids[i]!,
        workspace_id: e.workspaceId,
        at: new Date(now),
        action: e.action,
        actor_kind: e.actor.kind,
        actor_user_id: e.actor.userId ?? null,
        actor_key_id: e.actor.keyId ?? null,
        actor_label: e.actor.label,
        target: e.target ?? null,
        ip: e.actor.ip ?? null,
        detail: JSON.stringify(e.detail ?? {}),
      })),
    )
    .execute();
}

export interface AuditFilter {
  action?: string | undefined;
  /** Text in the actor's label (an address, a key's name). */
  actor?: string | undefined;
  /** Text in the target. */
  target?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Keyset cursor: events strictly older than this (at, id). */
  before?: { at: Date; id: string } | undefined;
}

export interface AuditEvent {
  id: string;
  at: Date;
  action: string;
  actorKind: 'session' | 'api_key' | 'system' | 'anonymous';
  actorLabel: string;
  actorUserId: string | null;
  actorKeyId: string | null;
  target: string | null;
  ip: string | null;
  detail: Record<string, unknown>;
}

/** LIKE's own characters taken literally (backslash is PostgreSQL's default escape). */
const literal = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
const like = (s: string) => `%${literal(s)}%`;

/** The workspace's events, newest first, filtered; `limit` rows at most. */
export async function listAudit(db: Db, workspaceId: string, f: AuditFilter, limit: number): Promise<AuditEvent[]> {
  let q = db.selectFrom('audit_event').selectAll().where('workspace_id', '=', workspaceId);
  if (f.action) {
    // "member" matches every member.* action; a full name matches itself.
    q = f.action.includes('.') ? q.where('action', '=', f.action) : q.where('action', 'like', `${literal(f.action)}.%`);
  }
  if (f.actor) q = q.where(sql<string>`lower(actor_label)`, 'like', like(f.actor.toLowerCase()));
  if (f.target) q = q.where(sql<string>`lower(coalesce(target, ''))`, 'like', like(f.target.toLowerCase()));
  if (f.from) q = q.where('at', '>=', f.from);
  if (f.to) q = q.where('at', '<', f.to);
  if (f.before) {
    const b = f.before;
    q = q.where((eb) => eb.or([eb('at', '<', b.at), eb.and([eb('at', '=', b.at), eb('id', '<', b.id)])]));
  }
  const rows = await q.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({
    id: r.id,
    at: r.at,
    action: r.action,
    actorKind: r.actor_kind,
    actorLabel: r.actor_label,
    actorUserId: r.actor_user_id,
    actorKeyId: r.actor_key_id,
    target: r.target,
    ip: r.ip,
    detail: r.detail,
  }));
}

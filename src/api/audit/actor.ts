import type { FastifyRequest } from 'fastify';
import type { Principal, WorkspaceAccess } from '../auth/access.ts';
import type { ApiContext } from '../context.ts';
import { realClock } from '../context.ts';
import { recordAudit, type AuditActor, type AuditEntry } from './audit-log.ts';
import type { Db } from '../../store/store.ts';

/** Who made a workspace route's call, for the log: the member's address, or the key's name and prefix. */
export async function actorOf(c: { ctx: ApiContext; ws: WorkspaceAccess; principal: Principal | undefined; req: FastifyRequest }, db: Db = c.ctx.store.db): Promise<AuditActor> {
  const { ws, principal, req } = c;
  if (principal?.kind === 'api_key') {
    const k = await db.selectFrom('api_key').select(['name', 'prefix']).where('id', '=', principal.keyId).executeTakeFirst();
    return { kind: 'api_key', keyId: principal.keyId, label: k ? `API key ${k.name} (${k.prefix}…)` : 'API key', ip: req.ip };
  }
  if (ws.viaAgency && principal?.kind === 'session') {
    // An agency's admin in its client: no membership here, so the account's address, marked as such.
    const a = await db.selectFrom('account').select('email').where('id', '=', principal.accountId).executeTakeFirst();
    return { kind: 'session', userId: null, label: `${a?.email ?? 'an agency admin'} (agency admin)`, ip: req.ip };
  }
  const u = ws.userId ? await db.selectFrom('app_user').select('email').where('id', '=', ws.userId).executeTakeFirst() : undefined;
  return { kind: 'session', userId: ws.userId, label: u?.email ?? 'a member', ip: req.ip };
}

type RouteLike = Parameters<typeof actorOf>[0];

/**
 * Records what a workspace route did, as its caller, in real time (a demo's clock never dates the
 * log). Inside a transaction pass it as `db`: the embedded store has one connection, and a read
 * outside the transaction would wait for it to end.
 */
export async function audit(c: RouteLike, e: Omit<AuditEntry, 'workspaceId' | 'actor'>, db: Db = c.ctx.store.db): Promise<void> {
  await recordAudit(db, { clock: realClock(c.ctx), random: c.ctx.random }, { workspaceId: c.ws.workspaceId, actor: await actorOf(c, db), ...e });
}

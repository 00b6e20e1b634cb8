/**
 * The peerings of a workspace, in the store: added by an admin from the peer's card ('pending'),
 * 'active' once a signed request between the two succeeded (each side signs only to peers it
 * added, so that proves both opted in), 'left' when either side ended it.
 *
 * Ending is at once and on this side alone: the row turns 'left' and, in the same transaction,
 * every planned warmup mail of ours to the peer's members that no sender has claimed is deleted;
 * the sender re-checks the peer's state in its claim (warmup-sender.ts), so nothing goes to the
 * peer after this commits. Mail already handed to a server is in flight: it arrives, and the peer,
 * which keeps our members for LEFT_GRACE_MS after the end, still recognises and hides it (no reply,
 * no report). The peer's members stay for the same grace, for the same reason, then are dropped.
 */
import { sql } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import type { Conn } from '../../store/in-tx.ts';
import { inTx } from '../../store/in-tx.ts';
import { publicKeyOf, type FederationCard } from './identity.ts';

/** How long a former peer's members are still recognised (mail in flight at the end). */
export const LEFT_GRACE_MS = 2 * 86_400_000;

export interface Peer {
  id: string;
  workspaceId: string;
  pool: string;
  name: string;
  url: string;
  signKey: string;
  agreeKey: string;
  state: 'pending' | 'active' | 'left';
  addedAt: Date;
  activatedAt: Date | null;
  leftAt: Date | null;
  leftBy: 'us' | 'peer' | null;
  exchangedAt: Date | null;
  failures: number;
  retryAt: Date | null;
  lastError: string | null;
}

type Row = Awaited<ReturnType<typeof selectPeers>>[number];
const selectPeers = (db: Conn) => db.selectFrom('warmup_peer').selectAll().orderBy('added_at').execute();
export function peerOf(r: Row): Peer {
  return {
    id: r.id, workspaceId: r.workspace_id, pool: r.pool, name: r.name, url: r.url, signKey: r.sign_key, agreeKey: r.agree_key, state: r.state,
    addedAt: r.added_at, activatedAt: r.activated_at, leftAt: r.left_at, leftBy: r.left_by, exchangedAt: r.exchanged_at, failures: r.failures, retryAt: r.retry_at, lastError: r.last_error,
  };
}

export async function listPeers(db: Conn, workspaceId: string): Promise<Peer[]> {
  return (await db.selectFrom('warmup_peer').selectAll().where('workspace_id', '=', workspaceId).orderBy('added_at').execute()).map(peerOf);
}

export async function getPeer(db: Conn, workspaceId: string, peerId: string): Promise<Peer> {
  const r = await db.selectFrom('warmup_peer').selectAll().where('id', '=', peerId).where('workspace_id', '=', workspaceId).executeTakeFirst();
  if (!r) throw cadenzaError('NOT_FOUND', 'no such warmup peer in this workspace');
  return peerOf(r);
}

/** The peering a signing key speaks for: the live one, else the latest that ended (so its requests are told it ended). */
export async function peerBySignKey(db: Conn, signKey: string): Promise<Peer | undefined> {
  const r = await db
    .selectFrom('warmup_peer')
    .selectAll()
    .where('sign_key', '=', signKey)
    .orderBy(sql`state = 'left'`)
    .orderBy('added_at', 'desc')
    .executeTakeFirst();
  return r ? peerOf(r) : undefined;
}

/** Adds a peer by its card (pending until it adds us too). Our own card, or a live peering with the same key, is refused. */
export async function addPeer(db: Conn, workspaceId: string, card: FederationCard, own: FederationCard, opts: { pool?: string; now: number; random: Random }): Promise<Peer> {
  publicKeyOf('ed25519', card.signKey);
  publicKeyOf('x25519', card.agreeKey);
  if (card.signKey === own.signKey) throw cadenzaError('INVALID_INPUT', 'that is this installation’s own card', { field: 'signKey' });
  const id = newId(opts.now, opts.random);
  const got = await db
    .insertInto('warmup_peer')
    .values({ id, workspace_id: workspaceId, pool: opts.pool ?? 'default', name: card.name, url: card.url.replace(/\/+$/, ''), sign_key: card.signKey, agree_key: card.agreeKey, state: 'pending', added_at: new Date(opts.now) })
    .onConflict((oc) => oc.columns(['workspace_id', 'sign_key']).where('state', '<>', 'left').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!got) throw cadenzaError('CONFLICT', 'this installation is already a peer of the workspace', { signKey: card.signKey });
  return getPeer(db, workspaceId, id);
}

/** How many members the peer's last exchange offered. */
export async function remoteMemberCount(db: Conn, peerId: string): Promise<number> {
  const n = await db.selectFrom('warmup_remote_member').select((eb) => eb.fn.countAll<number>().as('n')).where('peer_id', '=', peerId).executeTakeFirst();
  return Number(n?.n ?? 0);
}

/** A signed request between us succeeded: a pending peering becomes active. */
export async function activatePeer(db: Conn, peerId: string, now: number): Promise<void> {
  await db.updateTable('warmup_peer').set({ state: 'active', activated_at: new Date(now) }).where('id', '=', peerId).where('state', '=', 'pending').execute();
}

// -- name: warmup-peer-cancel
// Our planned mail to the peer's members (first mails and replies) that no sender claimed.
const cancelSql = (peerId: string) => sql`
  delete from warmup_mail where peer_id = ${peerId} and sender_mailbox_id is not null and claimed_at is null and sent_at is null`;

/** Ends the peering on this side (see the head comment). False when it had already ended. */
export async function endPeering(db: Conn, peerId: string, by: 'us' | 'peer', now: number): Promise<boolean> {
  return inTx(db, async (tx) => {
    const ended = await tx.updateTable('warmup_peer').set({ state: 'left', left_at: new Date(now), left_by: by, retry_at: null }).where('id', '=', peerId).where('state', '<>', 'left').returning('id').executeTakeFirst();
    if (!ended) return false;
    await cancelSql(peerId).execute(tx);
    return true;
  });
}

/** Drops the members of peerings that ended more than LEFT_GRACE_MS ago, and nonces older than the signature window. */
export async function purgeEnded(db: Conn, now: number): Promise<void> {
  await sql`delete from warmup_remote_member r using warmup_peer p where p.id = r.peer_id and p.state = 'left' and p.left_at < ${new Date(now - LEFT_GRACE_MS)}`.execute(db);
  await sql`delete from warmup_peer_nonce where seen_at < ${new Date(now - 10 * 60_000)}`.execute(db);
}

/** Records a request's nonce; false when the peer used it before. */
export async function claimNonce(db: Conn, peerId: string, nonce: string, now: number): Promise<boolean> {
  const r = await db.insertInto('warmup_peer_nonce').values({ peer_id: peerId, nonce, seen_at: new Date(now) }).onConflict((oc) => oc.doNothing()).returning('nonce').executeTakeFirst();
  return r !== undefined;
}

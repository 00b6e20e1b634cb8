import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import type { ApiContext } from '../context.ts';
import { exchangeWith, sendLeave } from '../../warmup/federation/federation-role.ts';
import { addPeer, endPeering, getPeer, listPeers, remoteMemberCount, type Peer } from '../../warmup/federation/peers.ts';
import { federationCard } from '../../warmup/federation/wire.ts';
import { audit } from '../audit/actor.ts';
import { defineRoute, workspaceParams } from '../http/route.ts';

/**
 * Warmup federation, per workspace (admins): this installation's card to hand to a peer's
 * operator, the workspace's peers, adding one by its card (pending until it adds ours), ending
 * one (at once: src/warmup/federation/peers.ts), and an exchange now instead of at the next pass.
 */

const card = z
  .object({
    url: z.string().describe("The base URL the peer reaches this installation at (CADENZA_PUBLIC_URL)"),
    name: z.string(),
    signKey: z.string().describe('Ed25519 public key, 32 bytes in base64'),
    agreeKey: z.string().describe('X25519 public key, 32 bytes in base64'),
  })
  .meta({ id: 'FederationCard' });

const peer = z
  .object({
    id: z.uuid(),
    pool: z.string(),
    name: z.string(),
    url: z.string(),
    signKey: z.string(),
    agreeKey: z.string(),
    state: z.enum(['pending', 'active', 'left']).describe('pending until the peer has added this installation too; left is final'),
    addedAt: z.string(),
    activatedAt: z.string().nullable(),
    leftAt: z.string().nullable(),
    leftBy: z.enum(['us', 'peer']).nullable(),
    exchangedAt: z.string().nullable(),
    failures: z.number().int().describe('Failed exchanges since the last good one'),
    retryAt: z.string().nullable(),
    lastError: z.string().nullable(),
    remoteMembers: z.number().int().describe('Members the peer offered at the last exchange'),
  })
  .meta({ id: 'WarmupPeer' });

const exchangeOutcome = z
  .object({ ok: z.boolean(), accepted: z.number().int().optional(), refused: z.number().int().optional(), members: z.number().int().optional(), ended: z.boolean().optional(), error: z.string().optional() })
  .meta({ id: 'WarmupPeerExchange' });

const iso = (d: Date | null) => d?.toISOString() ?? null;

async function view(ctx: ApiContext, p: Peer): Promise<z.output<typeof peer>> {
  const n = await remoteMemberCount(ctx.store.db, p.id);
  const { workspaceId: _ws, ...rest } = p;
  return { ...rest, addedAt: p.addedAt.toISOString(), activatedAt: iso(p.activatedAt), leftAt: iso(p.leftAt), exchangedAt: iso(p.exchangedAt), retryAt: iso(p.retryAt), remoteMembers: n };
}

function federation(ctx: ApiContext) {
  if (!ctx.federation) throw cadenzaError('CONFLICT', 'warmup federation is not set up on this server');
  return { store: ctx.store, clock: ctx.realClock ?? ctx.clock, identity: ctx.federation.identity };
}

const peerParams = workspaceParams({ peerId: z.uuid() });

export const warmupPeerRoutes = [
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/warmup/federation/card',
    summary: "This installation's federation card: what a peer's operator adds (also public at /federation/card)",
    tags: ['warmup'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: card,
    handler: async ({ ctx }) => federation(ctx).identity.card,
  }),
  defineRoute({
    method: 'GET',
    url: '/api/workspaces/:workspaceId/warmup/peers',
    summary: "The workspace's warmup peers (other installations whose pools it joined)",
    tags: ['warmup'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    response: z.object({ peers: z.array(peer) }),
    handler: async ({ ctx, ws }) => ({ peers: await Promise.all((await listPeers(ctx.store.db, ws.workspaceId)).map((p) => view(ctx, p))) }),
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/warmup/peers',
    summary: "Add a peer installation by its card; pending until its operator adds this installation's card too",
    tags: ['warmup'],
    access: { workspace: 'admin' },
    params: workspaceParams({}),
    body: z.object({ card: federationCard, pool: z.string().min(1).max(64).optional() }),
    example: () => ({ body: { card: { url: 'https://peer.example.com', name: 'peer', signKey: 'A'.repeat(43) + '=', agreeKey: 'B'.repeat(43) + '=' } } }),
    status: 201,
    response: peer,
    handler: async (c) => {
      const { ctx, ws, body } = c;
      const f = federation(ctx);
      const p = await addPeer(ctx.store.db, ws.workspaceId, body.card, f.identity.card, { ...(body.pool ? { pool: body.pool } : {}), now: f.clock.now(), random: ctx.random });
      await audit(c, { action: 'settings.changed', target: 'warmup', detail: { peerAdded: p.id, url: p.url } });
      return view(ctx, p);
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/api/workspaces/:workspaceId/warmup/peers/:peerId',
    summary: 'End a peering at once: nothing more is planned or sent to its members, the peer is told, its requests are refused',
    tags: ['warmup'],
    access: { workspace: 'admin' },
    params: peerParams,
    response: peer,
    handler: async (c) => {
      const { ctx, ws, params } = c;
      const p = await getPeer(ctx.store.db, ws.workspaceId, params.peerId);
      const f = federation(ctx);
      const wasLive = await endPeering(ctx.store.db, p.id, 'us', f.clock.now());
      // After the end is committed: a notice that does not arrive changes nothing here.
      if (wasLive && p.state === 'active') await sendLeave(f, p);
      await audit(c, { action: 'settings.changed', target: 'warmup', detail: { peerRemoved: p.id } });
      return view(ctx, await getPeer(ctx.store.db, ws.workspaceId, p.id));
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/api/workspaces/:workspaceId/warmup/peers/:peerId/exchange',
    summary: 'Exchange members, schedules and placement with the peer now',
    tags: ['warmup'],
    access: { workspace: 'admin' },
    params: peerParams,
    body: z.object({}).optional(),
    example: () => ({ body: {} }),
    response: exchangeOutcome,
    handler: async ({ ctx, ws, params }) => {
      const p = await getPeer(ctx.store.db, ws.workspaceId, params.peerId);
      const f = federation(ctx);
      if (p.state === 'left') throw cadenzaError('CONFLICT', 'this peering has ended; add the peer again to start a new one');
      const { peerId: _id, ...r } = await exchangeWith(f, p);
      return r;
    },
  }),
];

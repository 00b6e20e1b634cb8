import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConfig } from '../../common/config.ts';
import { cadenzaError } from '../../common/errors.ts';
import { resolveWorkspace } from '../../workspace/workspaces.ts';
import { exchangeWith, sendLeave } from '../../warmup/federation/federation-role.ts';
import { federationIdentity } from '../../warmup/federation/identity.ts';
import { addPeer, endPeering, listPeers } from '../../warmup/federation/peers.ts';
import { federationCard, readBody } from '../../warmup/federation/wire.ts';
import type { Store } from '../../store/store.ts';
import { deps, globals, masterKey, output, table, withStore, type GlobalOptions } from '../context.ts';

/**
 * `cadenza warmup peers …`: warmup federation from the command line, the same operations as the
 * API's peer routes (src/api/routes/warmup-peers.ts). The card carries the public URL of this
 * installation (CADENZA_PUBLIC_URL), so set it as `cadenza start` has it.
 */
async function identity(g: GlobalOptions, store: Store) {
  const cfg = loadConfig();
  const url = cfg.CADENZA_PUBLIC_URL ?? `http://localhost:${cfg.PORT}`;
  return federationIdentity(await masterKey(g, store), url, cfg.CADENZA_FEDERATION_NAME ?? new URL(url).host);
}

async function peerIn(store: Store, workspace: string | undefined, ref: string) {
  const w = await resolveWorkspace(store, workspace);
  const p = (await listPeers(store.db, w.id)).filter((x) => x.id === ref || x.name === ref || x.url === ref.replace(/\/+$/, ''));
  const live = p.filter((x) => x.state !== 'left');
  const found = live.length ? live : p;
  if (found.length === 0) throw cadenzaError('NOT_FOUND', `no warmup peer ${ref} in workspace ${w.name}`);
  if (found.length > 1) throw cadenzaError('INVALID_INPUT', `${ref} names ${found.length} peers: use its id`);
  return found[0]!;
}

export function register(program: Command): void {
  const peers = program.command('warmup').description('the warmup network').command('peers').description('warmup federation: other installations whose pools this one joins');
  peers
    .command('card')
    .description("this installation's card (JSON): give it to the peer's operator")
    .action(async (_o: unknown, cmd: Command) => {
      const g = globals(cmd);
      const card = await withStore(g, async (store) => (await identity(g, store)).card);
      process.stdout.write(`${JSON.stringify(card, null, 2)}\n`);
    });
  peers
    .command('list')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .action(async (o: { workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      const rows = await withStore(g, async (store) => listPeers(store.db, (await resolveWorkspace(store, o.workspace)).id));
      output(g, rows, () => table(rows.map((p) => ({ id: p.id, name: p.name, url: p.url, state: p.state, exchanged: p.exchangedAt?.toISOString() ?? '', failures: p.failures, error: p.lastError ?? '' }))));
    });
  peers
    .command('add <card-file>')
    .description("add a peer by its card (the JSON `cadenza warmup peers card` printed there); pending until it adds this installation's card too")
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .option('--pool <pool>', 'the local pool its members join (default: default)')
    .action(async (file: string, o: { workspace?: string; pool?: string }, cmd: Command) => {
      const g = globals(cmd);
      const card = readBody(federationCard, readFileSync(file));
      const p = await withStore(g, async (store) => {
        const w = await resolveWorkspace(store, o.workspace);
        return addPeer(store.db, w.id, card, (await identity(g, store)).card, { ...(o.pool ? { pool: o.pool } : {}), now: deps.clock.now(), random: deps.random });
      });
      output(g, p, () => `added ${p.name} (${p.url}) as a warmup peer, id ${p.id}: pending until its operator adds this installation's card`);
    });
  peers
    .command('exchange <peer>')
    .description('exchange members, schedules and placement with the peer now (id, name or URL)')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .action(async (ref: string, o: { workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      const r = await withStore(g, async (store) => {
        const p = await peerIn(store, o.workspace, ref);
        if (p.state === 'left') throw cadenzaError('CONFLICT', 'this peering has ended; add the peer again to start a new one');
        return exchangeWith({ store, clock: deps.clock, identity: await identity(g, store) }, p);
      });
      output(g, r, () => (r.ok ? `exchanged: ${r.members} member(s) offered, ${r.accepted} planned mail(s) accepted, ${r.refused} refused` : `${r.ended ? 'the peering ended' : 'exchange failed'}: ${r.error}`));
    });
  peers
    .command('remove <peer>')
    .description('end the peering at once: nothing more is planned or sent to its members, the peer is told, its requests are refused')
    .option('--workspace <id|name>', 'workspace (default: the only one)')
    .action(async (ref: string, o: { workspace?: string }, cmd: Command) => {
      const g = globals(cmd);
      const r = await withStore(g, async (store) => {
        const p = await peerIn(store, o.workspace, ref);
        const ended = await endPeering(store.db, p.id, 'us', deps.clock.now());
        const told = ended && p.state === 'active' ? await sendLeave({ store, clock: deps.clock, identity: await identity(g, store) }, p) : false;
        return { id: p.id, ended, told };
      });
      output(g, r, () => (r.ended ? `the peering with ${ref} has ended${r.told ? '; the peer was told' : '; the peer will learn it at its next request'}` : `the peering with ${ref} had already ended`));
    });
}

import type { Clock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import { parseMail } from '../ingest/parse/parse-mail.ts';
import type { Vault } from '../mailbox/vault.ts';
import type { Store } from '../store/store.ts';
import { setWarmup } from '../warmup/membership.ts';
import type { EmulatedProvider, SentMail } from './emulated-providers.ts';
import { addDemoMailbox, demoPacing, type DemoRep } from './workspace.ts';

/**
 * The demo's warmup network. The planner never pairs two mailboxes of one workspace or one domain,
 * so the demo's four reps (one workspace, one domain) need partners: four mailboxes of other
 * companies, each in a workspace of its own on the same emulators, as other teams of a shared
 * installation would be. All eight join the pool; the real planning role plans their day, the real
 * senders send the warmup mail through the Gmail and Graph connectors, and the real sync and
 * receiving side take it aside, rescue it from junk, flag it, read it and answer a share.
 *
 * What the providers would do between their users, the demo does here: mail one member sends
 * reaches the other's emulated mailbox (about one in eight in junk, as a filter might leave it).
 */
export const demoPeers: readonly DemoRep[] = [
  { name: 'Lena Fischer', email: 'lena@northwind-demo.test', provider: 'gmail', zone: 'Europe/Berlin' },
  { name: 'Sam Okafor', email: 'sam@bluefin-demo.test', provider: 'graph', zone: 'Africa/Lagos' },
  { name: 'Ana Souza', email: 'ana@quarry-demo.test', provider: 'gmail', zone: 'America/Sao_Paulo' },
  { name: 'Kenji Sato', email: 'kenji@tidewater-demo.test', provider: 'graph', zone: 'Asia/Tokyo' },
];

/** The share of warmup mail the emulated providers file in junk. */
const JUNK_SHARE = 1 / 8;

export interface NetworkMember {
  id: string;
  workspaceId: string;
  email: string;
  provider: EmulatedProvider;
}

/**
 * Creates the peers (a workspace each, the demo's pacing, an OAuth grant sealed in the vault) and
 * opts every rep and peer into the default pool.
 */
export async function joinDemoNetwork(
  store: Store,
  vault: Vault,
  deps: { clock: Clock; random: Random },
  o: { reps: ReadonlyArray<DemoRep & { id: string }>; workspaceId: string; tokenFor: (rep: DemoRep) => string },
): Promise<NetworkMember[]> {
  const now = deps.clock.now();
  const id = () => newId(deps.clock.now(), deps.random);
  const members: NetworkMember[] = o.reps.map((r) => ({ id: r.id, workspaceId: o.workspaceId, email: r.email, provider: r.provider }));
  for (const peer of demoPeers) {
    const workspaceId = id();
    const company = peer.email.slice(peer.email.indexOf('@') + 1).replace(/-demo\.test$/, '');
    await store.db
      .insertInto('workspace')
      .values({ id: workspaceId, name: `Warmup network: ${company[0]!.toUpperCase()}${company.slice(1)}`, time_zone: peer.zone, settings: JSON.stringify({ demo: true, pacing: demoPacing }) })
      .execute();
    const mailboxId = await addDemoMailbox(store, vault, id(), workspaceId, peer, 200, o.tokenFor(peer));
    members.push({ id: mailboxId, workspaceId, email: peer.email, provider: peer.provider });
  }
  for (const m of members) await setWarmup(store.db, m.workspaceId, m.id, { enabled: true, target: 40 }, now);
  return members;
}

/** Hands mail that one network member sent to the others it is addressed to, as their provider would. */
export class NetworkDelivery {
  private readonly byAddress: Map<string, NetworkMember>;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  /** Deliveries so far, by the folder they landed in. */
  readonly delivered = { inbox: 0, junk: 0 };

  constructor(
    private readonly o: {
      random: Random;
      deliver: (provider: EmulatedProvider, to: string, raw: Buffer, opts: { junk: boolean }) => Promise<void>;
      log?: Logger;
    },
    members: readonly NetworkMember[],
  ) {
    this.byAddress = new Map(members.map((m) => [m.email.toLowerCase(), m]));
  }

  /** A mail reached its sender's Sent folder: deliver it to each member it names. */
  received(sent: SentMail): void {
    if (this.stopped || !this.byAddress.has(sent.mailbox.toLowerCase())) return;
    const p = this.route(sent)
      .catch((e) => this.o.log?.warn({ err: e instanceof Error ? e.message : String(e) }, 'demo: warmup mail not delivered'))
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async route(sent: SentMail): Promise<void> {
    const mail = await parseMail(sent.raw);
    for (const to of mail.to) {
      const m = this.byAddress.get(to.address.toLowerCase());
      if (!m || this.stopped) continue;
      const junk = this.o.random.next() < JUNK_SHARE;
      await this.o.deliver(m.provider, m.email, sent.raw, { junk });
      this.delivered[junk ? 'junk' : 'inbox']++;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.inFlight]);
  }
}

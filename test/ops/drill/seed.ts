import { randomBytes } from 'node:crypto';
import { seededRandom } from '../../../src/common/random.ts';
import { localKeyWrapper, Vault } from '../../../src/mailbox/vault.ts';
import { applyDefinition } from '../../../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../../../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../../../src/sequence/definition.ts';
import { EnrollmentService } from '../../../src/sequence/enrollment-service.ts';
import { SimClock } from '../../../src/sim/sim-clock.ts';
import type { Store } from '../../../src/store/store.ts';
import { bedEndpoint } from '../../mail/mailbed.ts';

/**
 * What the failover drills send: one workspace, one mail-bed mailbox per sender (the server files
 * the Sent copy), `leadsPerMailbox` prospects each (plus-addresses of the prospect users, tagged per
 * run), one sequence per mailbox whose first email is due now. With `followUpAfter` the sequence
 * has a second email that long after the first: the one a reply must stop.
 * Pacing allows one send a minute per mailbox, so each mailbox's first send is under way at the
 * fault and its later ones come after.
 */
export const drillPass = 'pass';
export const bedUser = (n: number) => `sync${n}@inbox.test`;
/** A plus-address's mailbox: where the prospect's mail is delivered and read. */
export const baseAddress = (email: string) => email.replace(/\+[^@]*/, '');

export interface DrillSeedOptions {
  /** Mail-bed users sync<N> that send. */
  senders: number[];
  /** Mail-bed users sync<N> whose plus-addresses are the prospects. */
  prospects: number[];
  leadsPerMailbox: number;
  /** A second step this long after the first ("2 minutes"); none when absent. */
  followUpAfter?: string;
}

export interface DrillSeed {
  workspaceId: string;
  /** The master key Cadenza must be started with (the vault's credentials are under it). */
  master: Buffer;
  /** In every subject of this run. */
  tag: string;
  sends: number;
}

function noonZone(now: number): string {
  const offset = Math.max(-12, Math.min(12, 12 - new Date(now).getUTCHours()));
  return offset === 0 ? 'Etc/GMT' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
}

export async function seedDrill(store: Store, o: DrillSeedOptions): Promise<DrillSeed> {
  const db = store.db;
  const now = Date.now();
  const random = seededRandom(46);
  const clock = new SimClock(now);
  const master = randomBytes(32);
  const tag = randomBytes(4).toString('hex');
  const uuid = (kind: string) => `00000000-0000-7000-${kind}-${randomBytes(6).toString('hex')}`;
  // Noon in the workspace's zone: every send window is open whenever the drill runs.
  const zone = noonZone(now);
  const ws = uuid('8000');
  await db.insertInto('workspace').values({ id: ws, name: 'Drill', time_zone: zone }).execute();
  const pacing = { dayStart: '00:45', dayEnd: '23:15', dayJitterMinutes: 0, workDays: [1, 2, 3, 4, 5, 6, 7], lunch: null, gapMinutes: [1, 1], hourlyCeiling: [60, 60], pickupMinutes: 0 };
  const vault = new Vault(store, localKeyWrapper(master));
  let k = 0;
  for (const n of o.senders) {
    const id = uuid('8001');
    const settings = { smtp: bedEndpoint('smtp'), imap: bedEndpoint('imap'), serverSavesSent: true, pacing };
    await db.insertInto('mailbox').values({ id, workspace_id: ws, email: bedUser(n), provider: 'smtp_imap', daily_cap: 1000, settings: JSON.stringify(settings), time_zone: zone }).execute();
    await vault.put(ws, id, { kind: 'password', username: bedUser(n), password: drillPass });
    const leads: string[] = [];
    for (let j = 0; j < o.leadsPerMailbox; j++, k++) {
      const lid = uuid('8003');
      const email = bedUser(o.prospects[k % o.prospects.length]!).replace('@', `+${tag}-${k}@`);
      await db.insertInto('lead').values({ id: lid, workspace_id: ws, email, email_norm: email, first_name: `P${k}`, time_zone: zone }).execute();
      leads.push(lid);
    }
    const steps = [
      { key: 'intro', type: 'email' as const, subject: `Drill {{first_name}} ${tag}`, body: 'Hi {{first_name}}' },
      ...(o.followUpAfter ? [{ key: 'follow-up', type: 'email' as const, delay: o.followUpAfter, subject: `Follow-up {{first_name}} ${tag}`, body: 'Any thoughts, {{first_name}}?' }] : []),
    ];
    const def = validateDefinition({ key: `s${n}`, name: `s${n}`, window: 'any', holidays: false, jitter_minutes: 0, mailboxes: [bedUser(n)], steps });
    const seq = await applyDefinition(store, { clock, random }, ws, def);
    await bulkEnroll(store, { clock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leads });
  }
  // The first step's send requests, queued now (the scheduler's job; the sender-only drill has none).
  await new EnrollmentService({ store, clock, random }).fireDue(1000);
  return { workspaceId: ws, master, tag, sends: o.senders.length * o.leadsPerMailbox };
}

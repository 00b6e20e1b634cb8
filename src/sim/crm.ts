/**
 * CRM sync in the simulation (issue 17): the run's workspace is connected to a CRM (the Twenty
 * emulator on loopback, on the run's clock), so every send, reply, bounce, unsubscribe, task and
 * call the real engine records is queued by the real triggers (0054_crm.sql), and the real writer
 * (crm/writer.ts) with the real connector drains the outbox now and then, in the same crashing
 * process as the rest: a crash may land in its claim, between the CRM's write and its settle, or in
 * a lease. The CRM goes down for hours at random and loses answers after acting on them. Most of
 * the run's leads are contacts in the CRM; the others are not.
 *
 * Checked after each CRM step (check) and once the run has drained (finalCheck):
 *  crm-once          no activity is in the CRM twice (by its external id);
 *  crm-limit         the writer never had a request refused for the CRM's limit, and the CRM never
 *                    saw more requests in one window than its limit;
 *  crm-nothing-lost  at the end, every queued activity is settled: written (and then in the CRM)
 *                    when its lead is a CRM contact, skipped when not.
 *
 * Twenty, because its connector never waits on the clock itself (HubSpot's paces its searches
 * with sleeps, which a step of the simulation cannot wait out); the soak (test/crm/soak.ts) runs
 * all four CRMs.
 */
import type { Random } from '../common/random.ts';
import { newId } from '../common/ids.ts';
import type { CrmConnector } from '../crm/connector.ts';
import { makeConnector } from '../crm/connectors.ts';
import { externalIdField } from '../crm/twenty/activity-records.ts';
import { CrmWriter } from '../crm/writer.ts';
import type { Store } from '../store/store.ts';
import { startTwentyEmulator, type TwentyEmulator } from './emulators/twenty/emulator.ts';
import { InvariantViolation } from './invariants.ts';
import type { SimClock } from './sim-clock.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** The chances, per CRM step, of the CRM's faults (before the run's fault rate scales them). */
export const crmFaults = {
  /** The next batch create is acted on and its answer lost. */
  lostAnswer: 0.03,
  /** The CRM goes down for 10 minutes to 6 hours. */
  outage: 0.005,
};

export interface CrmStepResult {
  line: string;
  /** When the writer wants to come back; null: its outbox is empty. */
  nextAt: number | null;
  written: number;
}

export class SimCrm {
  private readonly connector: CrmConnector;
  private outageUntil = -Infinity;
  lostAnswers = 0;
  outages = 0;

  private constructor(
    private readonly emu: TwentyEmulator,
    readonly connectionId: string,
    private readonly clock: SimClock,
    private readonly random: Random,
    private readonly contacts: ReadonlySet<string>,
    swallowErrors: boolean,
  ) {
    const real = makeConnector('twenty', { baseUrl: emu.baseUrl, token: emu.tokens.issue('workspace'), clock });
    this.connector = swallowErrors ? swallowing(real) : real;
  }

  /** Starts the CRM with most of the leads as its contacts, and connects the workspace to it. */
  static async start(store: Store, clock: SimClock, random: Random, workspaceId: string, leadEmails: readonly string[], swallowErrors = false): Promise<SimCrm> {
    const emu = await startTwentyEmulator({ clock });
    const contacts = new Set<string>();
    for (const email of leadEmails) {
      if (random.next() < 0.15) continue;
      emu.addPerson({ email });
      contacts.add(email.toLowerCase());
    }
    const connectionId = newId(clock.now(), random);
    await store.db
      .insertInto('crm_connection')
      .values({ id: connectionId, workspace_id: workspaceId, kind: 'twenty', base_url: emu.baseUrl, credentials: Buffer.from('the simulation hands the writer its connector') })
      .execute();
    return new SimCrm(emu, connectionId, clock, random, contacts, swallowErrors);
  }

  /** A process's writer: its own lease owner and request window, lost with the process. */
  writer(store: Store, epoch: number): CrmWriter {
    return new CrmWriter({
      store,
      clock: this.clock,
      random: this.random.fork(`writer:${epoch}`),
      owner: `sim-process-${epoch}`,
      connectorFor: async (id) => {
        const c = await store.db.selectFrom('crm_connection').select('prepared_at').where('id', '=', id).executeTakeFirstOrThrow();
        return { connector: this.connector, prepared: c.prepared_at !== null };
      },
    });
  }

  /** One drain by the process's writer, after the CRM's faults of this moment. */
  async step(writer: CrmWriter, faultRate: number): Promise<CrmStepResult> {
    const now = this.clock.now();
    const notes: string[] = [];
    const down = now < this.outageUntil;
    if (!down && faultRate > 0 && this.random.next() < crmFaults.outage * faultRate) {
      this.outageUntil = now + this.random.int(10 * MIN, 6 * HOUR);
      this.emu.outage(this.outageUntil);
      this.outages++;
      notes.push(`CRM down until ${new Date(this.outageUntil).toISOString()}`);
    } else if (!down && faultRate > 0 && this.random.next() < crmFaults.lostAnswer * faultRate) {
      this.emu.faults.inject(this.random.next() < 0.5 ? 'notes.createMany' : 'tasks.createMany', { kind: 'drop', after: 'processing' });
      this.lostAnswers++;
      notes.push('the next create loses its answer');
    }
    const r = await writer.drain(this.connectionId);
    // As the sync does after each round: a crash after it leaves the window for the next process.
    await writer.saveWindow(this.connectionId);
    notes.push(`written ${r.written}, skipped ${r.skipped}, rejected ${r.rejected}, failures ${r.failures}`);
    return { line: `crm: ${notes.join('; ')}`, nextAt: r.nextAt, written: r.written };
  }

  /** The CRM is up again (the end of the run drains the outbox). */
  endOutage(): void {
    this.outageUntil = -Infinity;
    this.emu.outage(-Infinity);
  }

  check(): void {
    const seen = new Set<string>();
    for (const a of this.emu.activities()) {
      const id = String(a.record[externalIdField]);
      if (seen.has(id)) throw new InvariantViolation('crm-once', `${id} is in the CRM twice`);
      seen.add(id);
    }
    const refused = this.emu.requests.filter((r) => r.outcome === 429).length;
    if (refused > 0) throw new InvariantViolation('crm-limit', `the CRM refused ${refused} requests for its limit`);
    const { highestInWindow } = this.emu.stats();
    if (highestInWindow > this.connector.limits.requests) throw new InvariantViolation('crm-limit', `${highestInWindow} requests in one window, limit ${this.connector.limits.requests}`);
  }

  async finalCheck(store: Store): Promise<void> {
    this.check();
    const inCrm = new Set(this.emu.activities().map((a) => String(a.record[externalIdField]).toLowerCase()));
    const rows = await store.db.selectFrom('crm_activity').select(['external_id', 'email', 'state', 'last_error']).where('connection_id', '=', this.connectionId).execute();
    for (const r of rows) {
      const contact = this.contacts.has(r.email.toLowerCase());
      if (r.state === 'pending') throw new InvariantViolation('crm-nothing-lost', `${r.external_id} is still pending (${r.last_error ?? 'never tried'})`);
      if (contact && r.state !== 'written') throw new InvariantViolation('crm-nothing-lost', `${r.external_id} for contact ${r.email} ended ${r.state}: ${r.last_error}`);
      if (!contact && r.state !== 'skipped') throw new InvariantViolation('crm-nothing-lost', `${r.external_id} for ${r.email}, not a CRM contact, ended ${r.state}`);
      if (r.state === 'written' && !inCrm.has(r.external_id.toLowerCase())) throw new InvariantViolation('crm-nothing-lost', `${r.external_id} is recorded as written but is not in the CRM`);
    }
  }

  /** Activities the run queued (for the stats). */
  async queued(store: Store): Promise<number> {
    const r = await store.db.selectFrom('crm_activity').select((eb) => eb.fn.countAll<string>().as('n')).where('connection_id', '=', this.connectionId).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  close(): Promise<void> {
    return this.emu.close();
  }
}

/** The planted fault 'crm-swallow-errors': a failed request's activities reported as written. */
function swallowing(c: CrmConnector): CrmConnector {
  return {
    kind: c.kind,
    limits: c.limits,
    prepare: () => c.prepare(),
    writeActivities: (batch) => c.writeActivities(batch).catch(() => batch.map((a) => ({ externalId: a.externalId, status: 'written' as const, crmId: 'unknown' }))),
  };
}

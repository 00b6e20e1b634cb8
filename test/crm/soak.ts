/**
 * The CRM soak (issue 17, "Tests and figures"): tens of thousands of activities written to one
 * CRM's emulator through the production writer (src/crm/writer.ts) and connector
 * (src/crm/connectors.ts), on a simulated clock, while the CRM goes down for hours, loses answers
 * after acting on them and answers 429 now and then. Checked at the end, against the emulator's
 * own records and request counts:
 *
 *   - lost 0: every activity for a contact the CRM has is in the CRM, and every other is skipped;
 *   - duplicated 0: no external id is on two CRM records;
 *   - limits kept: the most requests the CRM saw in any window is within its limit, and it refused
 *     none for the limit (the injected 429s aside);
 *   - no flood: after the outage the backlog drains at the limit's pace, not faster.
 *
 * Shared by the short variant in `npm test` (test/crm/soak.test.ts) and `npm run bench -- crm-soak`.
 */
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { seededRandom, type Random } from '../../src/common/random.ts';
import type { CrmActivityKind } from '../../src/crm/connector.ts';
import { makeConnector } from '../../src/crm/connectors.ts';
import { CrmWriter } from '../../src/crm/writer.ts';
import { CRM_POLL_MS } from '../../src/crm/crm-sync.ts';
import { hubspotErrors } from '../../src/sim/emulators/hubspot/errors.ts';
import { startHubSpotEmulator } from '../../src/sim/emulators/hubspot/emulator.ts';
import { ACTIVITY_ID_PROPERTY } from '../../src/crm/hubspot/engagements.ts';
import { startTwentyEmulator, twentyDocumentedLimits } from '../../src/sim/emulators/twenty/emulator.ts';
import { twentyErrors } from '../../src/sim/emulators/twenty/errors.ts';
import { externalIdField } from '../../src/crm/twenty/activity-records.ts';
import { startPipedriveEmulator } from '../../src/sim/emulators/pipedrive/emulator.ts';
import { pipedriveErrors } from '../../src/sim/emulators/pipedrive/errors.ts';
import { startSalesforceEmulator } from '../../src/sim/emulators/salesforce/emulator.ts';
import { sfErrors } from '../../src/sim/emulators/salesforce/errors.ts';
import { SimClock } from '../../src/sim/sim-clock.ts';
import type { Store } from '../../src/store/store.ts';

export type SoakKind = 'hubspot' | 'salesforce' | 'pipedrive' | 'twenty';
export const SOAK_KINDS: readonly SoakKind[] = ['hubspot', 'salesforce', 'pipedrive', 'twenty'];

/**
 * Pipedrive's daily token budget is 30,000 per seat times the plan's multiplier (its rate-limit
 * page); one activity costs about 35 tokens (a search, a list and a create). The soak's company has
 * 10 seats on a multiplier of 7, so the budget is not what paces it (the burst limit is).
 */
const PIPEDRIVE_SOAK_TOKENS = 30_000 * 7 * 10;

export interface CrmSoakOptions {
  store: Store;
  kind: SoakKind;
  activities: number;
  /** Contacts in the CRM; activities go to these and to a few addresses it does not have. */
  contacts?: number;
  /** The share of activities for addresses the CRM has no contact for (default 0.02). */
  strangers?: number;
  /** Activities arrive evenly over this many simulated minutes (default 120). */
  arrivalMinutes?: number;
  /** The CRM answers 503 from this minute for this many hours (default from minute 30, 3 h; hours 0: none). */
  outage?: { fromMinute: number; hours: number };
  /** Before each drain, the chance that the next batch create is acted on and its answer lost (default 0.02). */
  lostAnswerRate?: number;
  /** Before each drain, the chance that the next request is answered 429 with Retry-After (default 0.01). */
  injected429Rate?: number;
  seed?: string;
  /** Called now and then with the activities settled so far. */
  progress?: (settled: number, total: number) => void;
}

export interface CrmSoakResult {
  kind: SoakKind;
  activities: number;
  written: number;
  skipped: number;
  rejected: number;
  pending: number;
  /** Activities for a contact the CRM has that are not in the CRM (written rows missing, or skipped wrongly). */
  lost: number;
  /** CRM records beyond the first for one external id. */
  duplicated: number;
  limit: { requests: number; windowMs: number };
  /** The most requests the CRM saw in one of its windows. */
  peakPerWindow: number;
  /** Requests the CRM refused for its limit (not counting the injected 429s). */
  refusedForLimit: number;
  requests: number;
  /** Requests answered 503 during the outage: the writer's probes. */
  outageProbes: number;
  lostAnswersInjected: number;
  injected429: number;
  /** Simulated minutes from the first arrival to the last activity settled. */
  simMinutes: number;
  /** Simulated seconds from the outage's end to the first activity written after it. */
  resumedAfterS: number | null;
  /** Written per simulated minute: the most in any minute, and the median of the minutes the backlog drained in. */
  peakPerMinute: number;
  backlogPerMinute: number;
  /** What the CRM's limit allows per minute, at the connector's worst case of requests per batch. */
  limitPerMinute: number;
  realMs: number;
}

/** A SimClock that knows when the code under test is asleep on it (and nothing else is in flight). */
class DrivenClock extends SimClock {
  sleepers = 0;
  override sleep(ms: number): Promise<void> {
    this.sleepers++;
    return super.sleep(ms).finally(() => this.sleepers--);
  }
}

/** Runs `p` to completion, moving the clock to the next timer whenever it waits only on the clock. */
async function drive<T>(clock: DrivenClock, p: Promise<T>): Promise<T> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done) {
    await new Promise((r) => setImmediate(r));
    if (!done && clock.sleepers > 0) {
      const at = clock.nextTimerAt();
      if (at !== undefined) clock.advanceTo(at);
    }
  }
  return p;
}

interface SoakCrm {
  baseUrl: string;
  token: string;
  addContact(email: string): void;
  /** External ids of the activity records the CRM holds, one entry per record. */
  externalIds(): string[];
  /** The most requests the CRM saw in one window of `windowMs` (the connector's limit's window). */
  peakPerWindow(windowMs: number): number;
  /** Requests the CRM refused for its limits (its own count, faults aside), when it keeps one. */
  refused?(): number;
  /** Every answer's status, in order. */
  outcomes(): Array<number | string>;
  outage(untilMs: number): void;
  loseNextAnswer(): void;
  inject429(): void;
  close(): Promise<void>;
}

async function startCrm(kind: SoakKind, clock: SimClock): Promise<SoakCrm> {
  if (kind === 'hubspot') {
    // Search shows a new record a moment after it is written, as HubSpot documents.
    const emu = await startHubSpotEmulator({ clock, searchLagMs: 2_000 });
    const types = ['notes', 'emails', 'calls', 'tasks'] as const;
    return {
      baseUrl: emu.baseUrl,
      token: emu.tokens.issue('portal'),
      addContact: (email) => void emu.addContact({ email }),
      externalIds: () => types.flatMap((t) => emu.records(t).map((r) => String(r.properties[ACTIVITY_ID_PROPERTY])).filter((x) => x !== 'undefined')),
      peakPerWindow: () => emu.rateStats().peakPerWindow,
      refused: () => emu.rateStats().refused,
      outcomes: () => emu.log.map((r) => r.outcome),
      outage: (until) => emu.outage(until),
      loseNextAnswer: () => emu.faults.inject('emails.batchCreate', { kind: 'drop', after: 'processing' }),
      inject429: () => emu.faults.inject('contacts.search', { kind: 'respond', ...hubspotErrors.tenSecondly('portal', { 'retry-after': '10' }) }),
      close: emu.close,
    };
  }
  if (kind === 'pipedrive') {
    const emu = await startPipedriveEmulator({ clock, dailyTokens: PIPEDRIVE_SOAK_TOKENS });
    return {
      baseUrl: emu.baseUrl,
      token: emu.tokens.issue('integration@acme.test'),
      addContact: (email) => void emu.addPerson({ email }),
      externalIds: () => emu.activities().map((a) => /Cadenza activity id: ([A-Za-z0-9:._-]{1,100})/.exec(a.note ?? '')?.[1] ?? 'none'),
      peakPerWindow: () => emu.rateStats().peakPerWindow,
      refused: () => emu.rateStats().refused,
      outcomes: () => emu.log.map((r) => r.outcome),
      outage: (until) => emu.outage(until),
      loseNextAnswer: () => emu.faults.inject('activities.create', { kind: 'drop', after: 'processing' }),
      inject429: () => emu.faults.inject('persons.search', { kind: 'respond', ...pipedriveErrors.tooManyRequests({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2' }) }),
      close: emu.close,
    };
  }
  if (kind === 'salesforce') {
    const emu = await startSalesforceEmulator({ clock });
    // The admin's setup (docs/providers/salesforce.md): the External ID field on Task.
    emu.addCustomField('Task', { name: 'Cadenza_Activity_Id__c', type: 'string', length: 100, externalId: true, unique: true });
    const account = emu.addAccount('Prospects');
    return {
      baseUrl: emu.baseUrl,
      token: JSON.stringify({ refreshToken: emu.authorize(), clientId: emu.client.id, clientSecret: emu.client.secret }),
      addContact: (email) => void emu.add('Contact', { LastName: email.split('@')[0], Email: email, AccountId: account }),
      externalIds: () => emu.records('Task').map((t) => String(t.Cadenza_Activity_Id__c)),
      peakPerWindow: (windowMs) => emu.apiPeak(windowMs),
      refused: () => emu.apiUsage().refused,
      outcomes: () => emu.log.map((r) => r.outcome),
      outage: (until) => emu.outage(until),
      loseNextAnswer: () => emu.faults.inject('composite.upsert', { kind: 'drop', after: 'processing' }),
      inject429: () => emu.faults.inject('query', { kind: 'respond', ...sfErrors.requestLimitExceeded() }),
      close: emu.close,
    };
  }
  const emu = await startTwentyEmulator({ clock });
  return {
    baseUrl: emu.baseUrl,
    token: emu.tokens.issue('workspace'),
    addContact: (email) => void emu.addPerson({ email }),
    externalIds: () => emu.activities().map((a) => String(a.record[externalIdField])),
    peakPerWindow: () => emu.stats().highestInWindow,
    outcomes: () => emu.requests.map((r) => r.outcome),
    outage: (until) => emu.outage(until),
    loseNextAnswer: () => emu.faults.inject('notes.createMany', { kind: 'drop', after: 'processing' }),
    inject429: () => emu.faults.inject('people.list', { kind: 'respond', ...twentyErrors.tooManyRequests(twentyDocumentedLimits.rateLimit.requests, twentyDocumentedLimits.rateLimit.windowMs) }),
    close: emu.close,
  };
}

/** The mix a sequencing team produces: mostly sends and opens, some calls and tasks, a few replies, bounces and unsubscribes. */
const MIX: ReadonlyArray<[CrmActivityKind, number]> = [
  ['email_sent', 40],
  ['email_opened', 20],
  ['email_clicked', 8],
  ['email_replied', 6],
  ['email_bounced', 3],
  ['unsubscribed', 2],
  ['call', 13],
  ['task_completed', 8],
];

function pickKind(random: Random): CrmActivityKind {
  let x = random.next() * 100;
  for (const [k, w] of MIX) if ((x -= w) < 0) return k;
  return 'email_sent';
}

function payloadOf(kind: CrmActivityKind, n: number, random: Random): Record<string, unknown> {
  switch (kind) {
    case 'email_opened':
      return { verdict: random.next() < 0.5 ? 'proxy' : 'human' };
    case 'email_clicked':
      return { url: `https://acme.test/pricing?n=${n}` };
    case 'email_bounced':
      return { detail: { hard: true, reason: '550 5.1.1 no such user' } };
    case 'call':
      return { outcome: 'connected', durationMs: random.int(5, 900) * 1000, direction: 'outbound', notes: 'Talked about the pilot.' };
    case 'task_completed':
      return { title: 'Send the deck', outcome: 'done' };
    default:
      return { detail: {} };
  }
}

const T0 = Date.UTC(2026, 10, 2, 13, 0);
const MIN = 60_000;

export async function runCrmSoak(o: CrmSoakOptions): Promise<CrmSoakResult> {
  const started = performance.now();
  const random = seededRandom(o.seed ?? `crm-soak-${o.kind}`);
  // The CRM's contacts were there a while before the first activity (search shows them after its lag).
  const clock = new DrivenClock(T0 - 10 * MIN);
  const crm = await startCrm(o.kind, clock);
  const { db } = o.store;
  try {
    const contacts = o.contacts ?? Math.max(10, Math.ceil(o.activities / 20));
    const emails = Array.from({ length: contacts }, (_, i) => `prospect${i}@company${i % 97}.test`);
    for (const e of emails) crm.addContact(e);
    clock.advanceTo(T0);

    const workspaceId = randomUUID();
    const connectionId = randomUUID();
    await db.insertInto('workspace').values({ id: workspaceId, name: `CRM soak ${o.kind}`, time_zone: 'Europe/London' }).execute();
    await db.insertInto('crm_connection').values({ id: connectionId, workspace_id: workspaceId, kind: o.kind, base_url: crm.baseUrl, credentials: Buffer.from('not used: the soak gives the writer its connector') }).execute();

    // The outbox, filled as the triggers would (0054_crm.sql): each activity due when it happened.
    const arrivalMs = (o.arrivalMinutes ?? 120) * MIN;
    const strangers = o.strangers ?? 0.02;
    const known = new Set<string>();
    const rows = [];
    for (let n = 0; n < o.activities; n++) {
      const kind = pickKind(random);
      const stranger = random.next() < strangers;
      const email = stranger ? `stranger${n}@elsewhere.test` : emails[random.int(0, contacts - 1)]!;
      const at = new Date(T0 + Math.floor((n * arrivalMs) / o.activities));
      const externalId = `cadenza:soak:${n}`;
      if (!stranger) known.add(externalId);
      rows.push({ connection_id: connectionId, workspace_id: workspaceId, external_id: externalId, kind, email, payload: JSON.stringify(payloadOf(kind, n, random)), occurred_at: at, next_attempt_at: at });
    }
    for (let i = 0; i < rows.length; i += 1000) await db.insertInto('crm_activity').values(rows.slice(i, i + 1000)).execute();

    const connector = makeConnector(o.kind, { baseUrl: crm.baseUrl, token: crm.token, clock });
    // The writer runs prepare() on its first drain, as it does for a new connection.
    let prepared = false;
    const connectorFor = async () => {
      const r = { connector, prepared };
      prepared = true;
      return r;
    };
    const writer = new CrmWriter({ store: o.store, clock, random: random.fork('writer'), owner: 'soak', connectorFor });

    const outage = o.outage ?? { fromMinute: 30, hours: 3 };
    const outageFrom = T0 + outage.fromMinute * MIN;
    const outageUntil = outageFrom + outage.hours * 60 * MIN;
    let outageSet = outage.hours <= 0;
    const lostRate = o.lostAnswerRate ?? 0.02;
    const rate429 = o.injected429Rate ?? 0.01;
    let lostAnswersInjected = 0;
    let injected429 = 0;
    let settled = 0;
    let drains = 0;
    for (;;) {
      if (!outageSet && clock.now() >= outageFrom) {
        crm.outage(outageUntil);
        outageSet = true;
      }
      // Faults are queued only while the CRM is up: an outage answers before them, and they would pile up.
      const down = clock.now() >= outageFrom && clock.now() < outageUntil;
      // The first batch loses its answer and the second is refused with a 429 whatever the rates
      // (unless a rate is 0), so even a short run goes through both.
      drains++;
      if (!down && lostRate > 0 && (drains === 1 || random.next() < lostRate)) {
        crm.loseNextAnswer();
        lostAnswersInjected++;
      }
      if (!down && rate429 > 0 && (drains === 2 || random.next() < rate429)) {
        crm.inject429();
        injected429++;
      }
      const r = await drive(clock, writer.drain(connectionId));
      settled += r.written + r.skipped + r.rejected;
      if (process.env.SOAK_DEBUG) console.log(new Date(clock.now()).toISOString(), JSON.stringify(r), r.nextAt ? new Date(r.nextAt).toISOString() : null);
      o.progress?.(settled, o.activities);
      if (r.nextAt === null) break;
      // The sync loop (crm-sync.ts) looks every CRM_POLL_MS and drains a connection once the time
      // the writer gave has come. The outage starts at its minute even when nobody looks.
      const polled = Math.ceil((Math.max(r.nextAt, clock.now() + 1) - T0) / CRM_POLL_MS) * CRM_POLL_MS + T0;
      const next = !outageSet && polled > outageFrom ? outageFrom : polled;
      clock.advanceTo(next);
    }

    const states = await db.selectFrom('crm_activity').select(['state', db.fn.countAll<string>().as('n')]).where('connection_id', '=', connectionId).groupBy('state').execute();
    const count = (s: string) => Number(states.find((x) => x.state === s)?.n ?? 0);
    const inCrm = new Map<string, number>();
    for (const id of crm.externalIds()) inCrm.set(id.toLowerCase(), (inCrm.get(id.toLowerCase()) ?? 0) + 1);
    let duplicated = 0;
    for (const k of inCrm.values()) duplicated += k - 1;
    let lost = 0;
    for (const id of known) if (!inCrm.has(id.toLowerCase())) lost++;
    if (process.env.SOAK_DEBUG) {
      const missing = [...known].filter((id) => !inCrm.has(id.toLowerCase()));
      console.log('missing', await db.selectFrom('crm_activity').selectAll().where('external_id', 'in', missing.length ? missing : ['-']).execute());
    }
    const byMinute = await sql<{ m: string; n: string }>`
      select floor(extract(epoch from written_at) / 60)::bigint as m, count(*) as n
      from crm_activity where connection_id = ${connectionId} and state = 'written' group by 1 order by 1`.execute(db);
    const minutes = byMinute.rows.map((r) => ({ at: Number(r.m) * MIN, n: Number(r.n) }));
    // The writer said its outbox was empty at the last drain: everything was settled by now.
    const finished = clock.now();
    const after = await sql<{ at: Date | null }>`
      select min(written_at) as at from crm_activity where connection_id = ${connectionId} and written_at >= ${new Date(outageUntil)}`.execute(db);
    const firstAfter = after.rows[0]?.at ? new Date(after.rows[0].at).getTime() : null;
    // After the outage, everything that arrived during it is written as fast as the limit allows
    // (the last minute, partly idle, left out).
    const afterOutage = minutes.filter((m) => outage.hours > 0 && m.at >= outageUntil).map((m) => m.n);
    const drainMinutes = afterOutage.length > 2 ? afterOutage.slice(0, -1) : minutes.map((m) => m.n);
    const { limits } = connector;
    const outcomes = crm.outcomes();
    return {
      kind: o.kind,
      activities: o.activities,
      written: count('written'),
      skipped: count('skipped'),
      rejected: count('rejected'),
      pending: count('pending'),
      lost,
      duplicated,
      limit: { requests: limits.requests, windowMs: limits.windowMs },
      peakPerWindow: crm.peakPerWindow(limits.windowMs),
      refusedForLimit: crm.refused ? crm.refused() : outcomes.filter((x) => x === 429).length - injected429,
      requests: outcomes.length,
      outageProbes: outage.hours > 0 ? outcomes.filter((x) => x === 503).length : 0,
      lostAnswersInjected,
      injected429,
      simMinutes: (finished - T0) / MIN,
      resumedAfterS: firstAfter === null || outage.hours <= 0 ? null : (firstAfter - outageUntil) / 1000,
      peakPerMinute: Math.max(0, ...minutes.map((m) => m.n)),
      backlogPerMinute: median(drainMinutes),
      limitPerMinute: Math.floor(((limits.requests / limits.requestsPerBatch) * limits.maxBatch * MIN) / limits.windowMs),
      realMs: performance.now() - started,
    };
  } finally {
    await crm.close();
  }
}

function median(xs: number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

import { afterEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim/sim-clock.ts';
import { hubspotErrors } from '../../sim/emulators/hubspot/errors.ts';
import { startHubSpotEmulator, type HubSpotEmulator, type HubSpotEmulatorOptions } from '../../sim/emulators/hubspot/emulator.ts';
import { CrmAuthError, CrmTransientError, type CrmActivity } from '../connector.ts';
import { HubSpotConnector } from './connector.ts';
import { SEARCH_SETTLE_MS } from './http.ts';

/**
 * The HubSpot connector against the HubSpot emulator over loopback: what it writes (object types,
 * properties, associations), that a retried batch is written once, and what each failure becomes.
 * Both run on the system clock, so the search pacing is real: a batch of every kind waits about a
 * second for its fifth search.
 */
let emu: HubSpotEmulator;
let token: string;

async function setup(opts: { emulator?: HubSpotEmulatorOptions; searchesPerSecond?: number; timeoutMs?: number; prepare?: boolean } = {}) {
  await emu?.close();
  emu = await startHubSpotEmulator(opts.emulator);
  token = emu.tokens.issue('portal');
  const crm = new HubSpotConnector({ baseUrl: emu.baseUrl, token: () => token, timeoutMs: opts.timeoutMs ?? 5000, searchesPerSecond: opts.searchesPerSecond });
  if (opts.prepare !== false) await crm.prepare();
  return crm;
}

afterEach(async () => {
  await emu?.close();
});

const ANA = 'ana@acme.test';
const at = '2026-01-05T09:30:00.000Z';

function activity(n: number, kind: CrmActivity['kind'], over: Partial<CrmActivity> = {}): CrmActivity {
  return { externalId: `cadenza:event:${n}`, kind, email: ANA, occurredAt: at, title: `${kind} ${n}`, body: `body ${n}`, ...over };
}

const everyKind: CrmActivity[] = [
  activity(1, 'email_sent', { title: 'Email sent: Quick question (Outbound Q4, step 2)', body: 'Hi Ana,\nquick question' }),
  activity(2, 'email_replied', { replyIntent: 'interested', body: 'Sounds good' }),
  activity(3, 'email_opened', { automatic: true, title: 'Email opened' }),
  activity(4, 'email_clicked'),
  activity(5, 'email_bounced'),
  activity(6, 'unsubscribed'),
  activity(7, 'call', {
    externalId: 'cadenza:call:0b9e',
    body: 'Talked <pricing> & terms',
    call: { direction: 'outbound', outcome: 'connected', durationSeconds: 95, recordingUrl: 'https://cadenza.example/calls/0b9e', transcript: 'hello' },
  }),
  activity(8, 'task_completed', { title: 'Task: send the deck' }),
];

describe('HubSpot connector', () => {
  it('prepare creates the cadenza group and cadenza_activity_id on each engagement type, and the two Cadenza-owned contact properties, and may run again', async () => {
    const crm = await setup();
    await crm.prepare();
    for (const type of ['notes', 'emails', 'calls', 'tasks'] as const) {
      expect(emu.store.property(type, 'cadenza_activity_id')).toMatchObject({ type: 'string', fieldType: 'text', groupName: 'cadenza', custom: true });
    }
    expect(emu.store.property('contacts', 'cadenza_sequence_status')).toMatchObject({ type: 'string', groupName: 'cadenza', custom: true });
    expect(emu.store.property('contacts', 'cadenza_last_activity_at')).toMatchObject({ type: 'datetime', groupName: 'cadenza', custom: true });
    // 4 × (group + property), then the contacts' group and its two properties.
    expect(emu.log.map((r) => r.outcome)).toEqual([...Array(11).fill(201), ...Array(11).fill(409)]);
  });

  it('writes every kind once, as the right engagement with its properties and the contact association; an unknown address is no_contact', async () => {
    const crm = await setup();
    const ana = emu.addContact({ email: 'Ana@Acme.test' });
    const stranger = activity(9, 'email_sent', { email: 'nobody@acme.test' });
    const results = await crm.writeActivities([...everyKind, { ...stranger, email: 'ANA@acme.TEST', externalId: 'cadenza:event:10' }, stranger]);

    expect(results.find((r) => r.externalId === 'cadenza:event:9')).toEqual({ externalId: 'cadenza:event:9', status: 'no_contact' });
    const written = results.filter((r) => r.status === 'written');
    expect(written).toHaveLength(9);
    const crmIdOf = (id: string) => (results.find((r) => r.externalId === id) as { crmId: string }).crmId;

    const byType = { emails: emu.records('emails'), calls: emu.records('calls'), tasks: emu.records('tasks'), notes: emu.records('notes') };
    expect(Object.fromEntries(Object.entries(byType).map(([t, rs]) => [t, rs.map((r) => r.properties.cadenza_activity_id).sort()]))).toEqual({
      emails: ['cadenza:event:1', 'cadenza:event:10', 'cadenza:event:2'],
      calls: ['cadenza:call:0b9e'],
      tasks: ['cadenza:event:8'],
      notes: ['cadenza:event:3', 'cadenza:event:4', 'cadenza:event:5', 'cadenza:event:6'],
    });
    const typeIds = { emails: 198, calls: 194, tasks: 204, notes: 202 };
    for (const [type, records] of Object.entries(byType)) {
      for (const r of records) {
        expect(r.associations).toEqual([{ toObjectType: 'contacts', toId: ana, associationCategory: 'HUBSPOT_DEFINED', associationTypeId: typeIds[type as keyof typeof typeIds] }]);
        expect(r.properties.hs_timestamp).toBe(at);
        expect(crmIdOf(r.properties.cadenza_activity_id!)).toBe(r.id);
      }
    }
    const one = (type: keyof typeof byType, id: string) => byType[type].find((r) => r.properties.cadenza_activity_id === id)!.properties;
    expect(one('emails', 'cadenza:event:1')).toMatchObject({
      hs_email_direction: 'EMAIL',
      hs_email_status: 'SENT',
      hs_email_subject: 'Email sent: Quick question (Outbound Q4, step 2)',
      hs_email_text: 'Hi Ana,\nquick question',
    });
    expect(one('emails', 'cadenza:event:2')).toMatchObject({ hs_email_direction: 'INCOMING_EMAIL', hs_email_text: 'Sounds good\n\nClassified by Cadenza as: interested' });
    expect(one('emails', 'cadenza:event:2').hs_email_status).toBeUndefined();
    expect(one('calls', 'cadenza:call:0b9e')).toMatchObject({
      hs_call_title: 'call 7',
      hs_call_direction: 'OUTBOUND',
      hs_call_duration: '95000',
      hs_call_status: 'COMPLETED',
      hs_call_disposition: 'f240bbac-87c9-4f6e-bf70-924b57d47db7',
      hs_call_recording_url: 'https://cadenza.example/calls/0b9e',
      hs_call_body: 'Talked &lt;pricing&gt; &amp; terms<br><br>Outcome: connected<br><br>Recording: https://cadenza.example/calls/0b9e<br><br>Transcript:<br>hello',
    });
    expect(one('tasks', 'cadenza:event:8')).toMatchObject({ hs_task_status: 'COMPLETED', hs_task_subject: 'Task: send the deck', hs_task_body: 'body 8' });
    expect(one('notes', 'cadenza:event:3').hs_note_body).toBe('Email opened<br><br>Automatic: an image proxy or a security scanner fetched the email, not a person.<br><br>body 3');
    expect(one('notes', 'cadenza:event:4').hs_note_body).toBe('email_clicked 4<br><br>body 4');

    // One contacts search, one search and one batch create per engagement type; the fifth search
    // waited for the per-second limit instead of meeting a 429.
    expect(emu.requestCounts()).toMatchObject({ 'contacts.search': 1, 'emails.search': 1, 'emails.batchCreate': 1, 'notes.search': 1, 'notes.batchCreate': 1 });
    expect(emu.log.length - 11).toBeLessThanOrEqual(crm.limits.requestsPerBatch);
    expect(emu.rateStats().refused).toBe(0);
    expect(emu.rateStats().peakSearchesPerSecond).toBeLessThanOrEqual(4);
  });

  it('the same batch again is answered from the CRM: the same ids, nothing written twice', async () => {
    const crm = await setup({ searchesPerSecond: 50, emulator: { searchesPerSecond: 50 } });
    emu.addContact({ email: ANA });
    const first = await crm.writeActivities(everyKind);
    const again = await crm.writeActivities(everyKind);
    expect(again).toEqual(first);
    expect(emu.requestCounts()['notes.batchCreate']).toBe(1);
  });

  it('a batch whose answer was lost after HubSpot wrote it is transient; retried, every activity is still one record', async () => {
    const crm = await setup({ searchesPerSecond: 50, emulator: { searchesPerSecond: 50 } });
    emu.addContact({ email: ANA });
    const batch = [activity(1, 'email_opened'), activity(2, 'email_clicked'), activity(3, 'email_sent')];
    emu.faults.inject('notes.batchCreate', { kind: 'drop', after: 'processing' });
    await expect(crm.writeActivities(batch)).rejects.toBeInstanceOf(CrmTransientError);
    // The notes were written; the call stopped there, before the emails.
    expect(emu.records('notes')).toHaveLength(2);
    expect(emu.records('emails')).toHaveLength(0);

    const retried = await crm.writeActivities(batch);
    expect(retried.map((r) => r.status)).toEqual(['written', 'written', 'written']);
    expect(emu.records('notes')).toHaveLength(2);
    expect(emu.records('emails')).toHaveLength(1);
    expect(retried.map((r) => (r as { crmId: string }).crmId).sort()).toEqual([...emu.records('notes'), ...emu.records('emails')].map((r) => r.id).sort());
  });

  it('429s are transient with the wait they imply: Retry-After when sent, a second for search, the 10-s window', async () => {
    // The emulator's clock stands still, so its limits see every request at one instant.
    let crm = await setup({ emulator: { clock: new SimClock(Date.UTC(2026, 0, 5)), searchesPerSecond: 4 }, searchesPerSecond: 10 });
    emu.addContact({ email: ANA });
    emu.faults.inject('contacts.search', { kind: 'respond', ...hubspotErrors.tenSecondly('portal', { 'retry-after': '3' }) });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toMatchObject({ name: 'CrmTransientError', retryAfterMs: 3000 });
    // The emulator takes 4 searches a second; the connector, told 10, sends a fifth.
    const secondly = await crm.writeActivities(everyKind).catch((e: unknown) => e);
    expect(secondly).toBeInstanceOf(CrmTransientError);
    expect(secondly).toMatchObject({ retryAfterMs: 1000 });
    expect((secondly as Error).message).toContain('You have reached your secondly limit.');

    // prepare's 11 requests and one search fill a window of 12: the next request waits the window out.
    crm = await setup({ emulator: { clock: new SimClock(Date.UTC(2026, 0, 5)), requestsPerWindow: 12 } });
    emu.addContact({ email: ANA });
    const window = await crm.writeActivities([activity(1, 'call')]).catch((e: unknown) => e);
    expect(window).toMatchObject({ name: 'CrmTransientError', retryAfterMs: 10_000 });
    expect((window as Error).message).toContain('ten_secondly_rolling');
    expect(emu.requestCounts()).toMatchObject({ 'contacts.search': 1, 'calls.search': 1 });
  });

  it('an outage, a 5xx, a hang past the timeout and a closed connection are transient, retried after search has settled', async () => {
    const crm = await setup({ timeoutMs: 300, searchesPerSecond: 50, emulator: { searchesPerSecond: 50 } });
    emu.addContact({ email: ANA });
    emu.outage(Date.now() + 60_000);
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toThrow(/HubSpot answered 503/);
    // Any of these may have written: the retry must come when search shows what was.
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toMatchObject({ retryAfterMs: SEARCH_SETTLE_MS });
    emu.outage(0);
    emu.faults.inject('calls.search', { kind: 'respond', ...hubspotErrors.internal() });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toThrow(/500 INTERNAL_ERROR/);
    emu.faults.inject('calls.batchCreate', { kind: 'hang', after: 'receiving' });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toThrow(/no answer within 300 ms/);
    emu.faults.inject('*', { kind: 'drop', after: 'receiving' });
    await expect(crm.writeActivities([activity(1, 'call')])).rejects.toBeInstanceOf(CrmTransientError);
    expect(await crm.writeActivities([activity(1, 'call')])).toEqual([{ externalId: 'cadenza:event:1', status: 'written', crmId: emu.records('calls')[0]!.id }]);
  });

  it('a refused or revoked token, or one without the scope, is CrmAuthError; the token never shows in the message', async () => {
    const crm = await setup();
    emu.addContact({ email: ANA });
    emu.faults.inject('emails.batchCreate', { kind: 'respond', ...hubspotErrors.missingScopes(['crm.objects.contacts.write']) });
    const scope = await crm.writeActivities([activity(1, 'email_sent')]).catch((e: unknown) => e);
    expect(scope).toBeInstanceOf(CrmAuthError);
    expect((scope as Error).message).toContain('MISSING_SCOPES');
    emu.tokens.expire(token);
    const expired = await crm.writeActivities([activity(1, 'email_sent')]).catch((e: unknown) => e);
    expect(expired).toBeInstanceOf(CrmAuthError);
    expect((expired as Error).message).not.toContain(token);
  });

  it("a value HubSpot refuses rejects that activity alone (multi-status); a 400 naming no input rejects that type's batch; the rest is written", async () => {
    const crm = await setup({ searchesPerSecond: 50, emulator: { searchesPerSecond: 50 } });
    emu.addContact({ email: ANA });
    const bad = activity(2, 'email_opened', { occurredAt: 'yesterday-ish' });
    const results = await crm.writeActivities([activity(1, 'email_opened'), bad, activity(3, 'email_sent')]);
    expect(results.map((r) => r.status)).toEqual(['written', 'rejected', 'written']);
    expect((results[1] as { error: string }).error).toContain('INVALID_DATE');
    expect(emu.records('notes')).toHaveLength(1);

    emu.faults.inject('emails.batchCreate', { kind: 'respond', ...hubspotErrors.validation('Property values were not valid: [...]') });
    const whole = await crm.writeActivities([activity(4, 'email_sent'), activity(5, 'email_replied'), activity(6, 'unsubscribed')]);
    expect(whole.map((r) => r.status)).toEqual(['rejected', 'rejected', 'written']);
    expect((whole[0] as { error: string }).error).toBe('HubSpot refused the emails: Property values were not valid: [...]');
  });

  it('without prepare, the dedupe search on the missing property is refused: the activities are rejected with the reason, nothing written', async () => {
    const crm = await setup({ prepare: false });
    emu.addContact({ email: ANA });
    const [r] = await crm.writeActivities([activity(1, 'task_completed')]);
    expect(r).toMatchObject({ status: 'rejected' });
    expect((r as { error: string }).error).toContain('cadenza_activity_id');
    expect(emu.records('tasks')).toHaveLength(0);
  });
});


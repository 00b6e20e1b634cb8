import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim-clock.ts';
import { startHubSpotEmulator, type HubSpotEmulator, type HubSpotEmulatorOptions } from './emulator.ts';
import { hubspotErrors } from './errors.ts';

/**
 * The emulator's own promises, checked over HTTP: HubSpot's documented answers (error bodies,
 * batch and search limits, rate-limit 429s and headers) that the connector tests do not all reach.
 */
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
let clock: SimClock;
let emu: HubSpotEmulator;
let token: string;

async function start(opts: HubSpotEmulatorOptions = {}) {
  await emu?.close();
  emu = await startHubSpotEmulator({ clock, ...opts });
  token = emu.tokens.issue('portal');
}

beforeEach(async () => {
  clock = new SimClock(T0);
  await start();
});
afterEach(async () => {
  await emu.close();
});

async function call(path: string, body?: unknown, auth: string | null = token) {
  const res = await fetch(`${emu.baseUrl}${path}`, {
    method: 'POST',
    headers: { ...(auth ? { authorization: `Bearer ${auth}` } : {}), 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json };
}

const note = (contactId: string, extra: Record<string, unknown> = {}) => ({
  properties: { hs_timestamp: '2026-01-05T09:00:00Z', hs_note_body: 'hello' },
  associations: [{ to: { id: contactId }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 }] }],
  ...extra,
});

const byEmail = (values: string[]) => ({ filterGroups: [{ filters: [{ propertyName: 'email', operator: 'IN', values }] }], properties: ['email'], limit: 100 });

describe('HubSpot emulator', () => {
  it('401 INVALID_AUTHENTICATION without a token or with an unknown one, EXPIRED_AUTHENTICATION for an expired one', async () => {
    for (const auth of [null, 'pat-na1-bogus']) {
      const r = await call('/crm/v3/objects/contacts/search', {}, auth);
      expect(r.status).toBe(401);
      expect(r.json).toMatchObject({ status: 'error', category: 'INVALID_AUTHENTICATION' });
      expect(r.json.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    }
    emu.tokens.expire(token);
    expect((await call('/crm/v3/objects/contacts/search', {})).json.category).toBe('EXPIRED_AUTHENTICATION');
    // A fault never pre-empts the token check.
    emu.faults.inject('contacts.search', { kind: 'respond', ...hubspotErrors.internal() });
    expect((await call('/crm/v3/objects/contacts/search', {}, null)).status).toBe(401);
    expect(emu.faults.pending()).toBe(1);
  });

  it('contacts: create (409 CONFLICT on an address taken, in any case), search by email with EQ and IN, default and chosen properties', async () => {
    const a = await call('/crm/v3/objects/contacts', { properties: { email: 'Ana@Acme.test', firstname: 'Ana' } });
    expect(a.status).toBe(201);
    expect(a.json.properties).toMatchObject({ email: 'ana@acme.test', firstname: 'Ana', hs_object_id: a.json.id });
    const dup = await call('/crm/v3/objects/contacts', { properties: { email: 'ANA@acme.test' } });
    expect([dup.status, dup.json.category, dup.json.message]).toEqual([409, 'CONFLICT', `Contact already exists. Existing ID: ${a.json.id}`]);
    const bo = emu.addContact({ email: 'bo@acme.test', lastname: 'Bo' });

    const eq = await call('/crm/v3/objects/contacts/search', { filterGroups: [{ filters: [{ propertyName: 'email', operator: 'EQ', value: 'ana@acme.test' }] }] });
    expect(eq.json.total).toBe(1);
    expect(Object.keys(eq.json.results[0].properties).sort()).toEqual(['createdate', 'email', 'firstname', 'hs_object_id', 'lastmodifieddate']);
    const inn = await call('/crm/v3/objects/contacts/search', byEmail(['ana@acme.test', 'bo@acme.test', 'nobody@acme.test']));
    expect(inn.json.results.map((r: { id: string }) => r.id)).toEqual([a.json.id, bo]);
    expect(Object.keys(inn.json.results[1].properties).sort()).toEqual(['createdate', 'email', 'hs_object_id', 'lastmodifieddate']);
  });

  it('search pages with `after`, refuses a limit over 100, paging past 10,000, unknown properties and operators it does not implement', async () => {
    for (let i = 0; i < 5; i++) emu.addContact({ email: `p${i}@x.test` });
    const p1 = await call('/crm/v3/objects/contacts/search', { limit: 2 });
    expect([p1.json.total, p1.json.results.length, p1.json.paging.next.after]).toEqual([5, 2, '2']);
    const p3 = await call('/crm/v3/objects/contacts/search', { limit: 2, after: '4' });
    expect([p3.json.results.length, p3.json.paging]).toEqual([1, undefined]);
    clock.advance(2000); // past the per-second search limit
    for (const [body, text] of [
      [{ limit: 101 }, 'limit'],
      [{ after: '10000' }, 'beyond 10000'],
      [{ filterGroups: [{ filters: [{ propertyName: 'nope', operator: 'EQ', value: 'x' }] }] }, 'nope'],
      [{ filterGroups: [{ filters: [{ propertyName: 'email', operator: 'CONTAINS_TOKEN', value: 'x' }] }] }, 'not implemented'],
    ] as const) {
      const r = await call('/crm/v3/objects/contacts/search', body);
      expect([r.status, r.json.category], text).toEqual([400, 'VALIDATION_ERROR']);
      expect(r.json.message).toContain(text);
      clock.advance(1000);
    }
  });

  it('batch create: the documented association ids only, at most 100 inputs, unknown properties and fields are a 400 that writes nothing', async () => {
    const c = emu.addContact({ email: 'ana@acme.test' });
    const ok = await call('/crm/v3/objects/notes/batch/create', { inputs: [note(c), note(c)] });
    expect([ok.status, ok.json.status, ok.json.results.length]).toEqual([201, 'COMPLETE', 2]);
    expect(emu.records('notes')[0]!.associations).toEqual([{ toObjectType: 'contacts', toId: c, associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 }]);

    const bad = [
      { inputs: Array.from({ length: 101 }, () => note(c)) },
      { inputs: [note(c), { ...note(c), properties: { hs_timestamp: '2026-01-05T09:00:00Z', cadenza_activity_id: 'x' } }] },
      { inputs: [note(c), { ...note(c), associations: [{ to: { id: c }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 198 }] }] }] },
      { inputs: [note('999999')] },
      { inputs: [{ properties: { hs_note_body: 'no timestamp' } }] },
      { inputs: [note(c, { extra: true })] },
      { inputs: [note(c)], nope: 1 },
    ];
    for (const body of bad) {
      const r = await call('/crm/v3/objects/notes/batch/create', body);
      expect([r.status, r.json.category]).toEqual([400, 'VALIDATION_ERROR']);
    }
    expect(emu.records('notes')).toHaveLength(2);
    const unknown = await call('/crm/v3/objects/notes/batch/create', bad[1]);
    expect(unknown.json.message).toContain('Property values were not valid');
    expect(unknown.json.message).toContain('PROPERTY_DOESNT_EXIST');
    const badOption = await call('/crm/v3/objects/emails', { properties: { hs_timestamp: '1767603600000', hs_email_direction: 'OUTGOING' } });
    expect(badOption.json.message).toContain('INVALID_OPTION');
  });

  it('properties: a custom property is created once (409 after), then written and searched; multi-status names the refused input', async () => {
    const c = emu.addContact({ email: 'ana@acme.test' });
    const prop = { name: 'cadenza_activity_id', label: 'Cadenza activity id', type: 'string', fieldType: 'text', groupName: 'cadenza' };
    expect((await call('/crm/v3/properties/notes', prop)).json.message).toContain('cadenza does not exist');
    expect((await call('/crm/v3/properties/notes/groups', { name: 'cadenza', label: 'Cadenza' })).status).toBe(201);
    expect((await call('/crm/v3/properties/notes/groups', { name: 'cadenza', label: 'Cadenza' })).status).toBe(409);
    expect((await call('/crm/v3/properties/notes', { ...prop, fieldType: 'number' })).status).toBe(400);
    const created = await call('/crm/v3/properties/notes', prop);
    expect([created.status, created.json.hubspotDefined]).toEqual([201, false]);
    const again = await call('/crm/v3/properties/notes', prop);
    expect([again.status, again.json.category]).toEqual([409, 'OBJECT_ALREADY_EXISTS']);

    const input = (id: string, props: Record<string, string> = {}) => ({ ...note(c), properties: { ...note(c).properties, cadenza_activity_id: id, ...props }, objectWriteTraceId: id });
    const multi = await call('/crm/v3/objects/notes/batch/create', { inputs: [input('a1'), input('a2', { hs_timestamp: 'not a date' })] });
    expect(multi.status).toBe(207);
    expect(multi.json.results.map((r: any) => [r.objectWriteTraceId, r.properties.cadenza_activity_id])).toEqual([['a1', 'a1']]);
    expect(multi.json.errors).toEqual([expect.objectContaining({ category: 'VALIDATION_ERROR', context: { objectWriteTraceId: ['a2'] } })]);
    expect(multi.json.errors[0].message).toContain('INVALID_DATE');

    const found = await call('/crm/v3/objects/notes/search', {
      filterGroups: [{ filters: [{ propertyName: 'cadenza_activity_id', operator: 'IN', values: ['a1', 'a2'] }] }],
      properties: ['cadenza_activity_id'],
    });
    expect(found.json.results.map((r: any) => r.properties.cadenza_activity_id)).toEqual(['a1']);
  });

  it('a new record shows in search only after searchLagMs', async () => {
    await start({ searchLagMs: 2000 });
    emu.addContact({ email: 'ana@acme.test' });
    expect((await call('/crm/v3/objects/contacts/search', byEmail(['ana@acme.test']))).json.total).toBe(0);
    clock.advance(2000);
    expect((await call('/crm/v3/objects/contacts/search', byEmail(['ana@acme.test']))).json.total).toBe(1);
  });

  it('rate limits: 429 TEN_SECONDLY_ROLLING with the X-HubSpot-RateLimit headers past the window, SECONDLY for searches; peaks and refusals counted', async () => {
    await start({ requestsPerWindow: 3 });
    const c = emu.addContact({ email: 'ana@acme.test' });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await call('/crm/v3/objects/notes/batch/create', { inputs: [note(c)] }));
    expect(answers.map((a) => [a.status, a.headers.get('x-hubspot-ratelimit-remaining')])).toEqual([
      [201, '2'],
      [201, '1'],
      [201, '0'],
      [429, '0'],
    ]);
    expect(answers[0]!.headers.get('x-hubspot-ratelimit-max')).toBe('3');
    expect(answers[0]!.headers.get('x-hubspot-ratelimit-interval-milliseconds')).toBe('10000');
    expect(answers[3]!.json).toMatchObject({ status: 'error', errorType: 'RATE_LIMIT', policyName: 'TEN_SECONDLY_ROLLING', message: 'You have reached your ten_secondly_rolling limit.' });
    // Documented as not sent: Retry-After on an API 429.
    expect(answers[3]!.headers.get('retry-after')).toBeNull();
    clock.advance(9_999);
    expect((await call('/crm/v3/objects/notes/batch/create', { inputs: [note(c)] })).status).toBe(429);
    clock.advance(1);
    expect((await call('/crm/v3/objects/notes/batch/create', { inputs: [note(c)] })).status).toBe(201);
    expect(emu.rateStats()).toEqual({ peakPerWindow: 5, peakSearchesPerSecond: 0, refused: 2 });

    await start({ searchesPerSecond: 4 });
    const searches = [];
    for (let i = 0; i < 5; i++) searches.push(await call('/crm/v3/objects/contacts/search', {}));
    expect(searches.map((s) => s.status)).toEqual([200, 200, 200, 200, 429]);
    expect(searches[4]!.json).toMatchObject({ errorType: 'RATE_LIMIT', policyName: 'SECONDLY', message: 'You have reached your secondly limit.' });
    // Search answers carry no rate-limit headers (documented).
    expect(searches[0]!.headers.get('x-hubspot-ratelimit-remaining')).toBeNull();
    clock.advance(1000);
    expect((await call('/crm/v3/objects/contacts/search', {})).status).toBe(200);
    expect(emu.rateStats()).toMatchObject({ peakSearchesPerSecond: 5, refused: 1 });
    expect(emu.requestCounts()).toEqual({ 'contacts.search': 6 });
  });

  it('faults: drop after processing writes and loses the answer; an outage answers 503 to everything until its end', async () => {
    const c = emu.addContact({ email: 'ana@acme.test' });
    emu.faults.inject('notes.batchCreate', { kind: 'drop', after: 'processing' });
    await expect(call('/crm/v3/objects/notes/batch/create', { inputs: [note(c)] })).rejects.toThrow();
    expect(emu.records('notes')).toHaveLength(1);
    emu.faults.inject('*', { kind: 'drop', after: 'receiving' });
    await expect(call('/crm/v3/objects/notes/batch/create', { inputs: [note(c)] })).rejects.toThrow();
    expect(emu.records('notes')).toHaveLength(1);
    expect(emu.log.map((r) => r.outcome)).toEqual(['dropped', 'dropped']);

    emu.outage(T0 + 60_000);
    const down = await call('/crm/v3/objects/contacts/search', {}, null);
    expect(down.status).toBe(503);
    clock.advanceTo(T0 + 60_000);
    expect((await call('/crm/v3/objects/contacts/search', {})).status).toBe(200);
  });

  it('slow answers wait on the emulator clock', async () => {
    emu.slow(5000);
    const pending = call('/crm/v3/objects/contacts/search', {});
    let done = false;
    void pending.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    clock.advance(5000);
    expect((await pending).status).toBe(200);
  });
});

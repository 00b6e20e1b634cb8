import { describe, expect, it } from 'vitest';
import { emulatorTestKit } from '../../../../test/emulators/kit.ts';
import { startPipedriveEmulator } from './emulator.ts';
import { pipedriveErrors } from './errors.ts';

/**
 * The emulator's own promises, over HTTP: Pipedrive's auth answers, request shapes it refuses,
 * v2 cursor paging with updated_since, the burst and daily limits with their headers, custom
 * fields, filters, and webhooks v2 with basic auth, duplicates and reordering.
 */
const T0 = Date.UTC(2026, 2, 2, 9, 0, 0);
const kit = emulatorTestKit('integration@acme.test', T0, (clock) => startPipedriveEmulator({ clock, dailyTokens: 1000 }));
const api = (path: string) => `${kit.emu.baseUrl}${path}`;

async function withApiToken(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const res = await fetch(api(path), { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

describe('Pipedrive emulator', () => {
  it('tokens: x-api-token or Bearer; none, unknown or revoked is 401 "unauthorized access"', async () => {
    const ok = await withApiToken('GET', '/v1/users/me', { 'x-api-token': kit.token });
    expect(ok.status).toBe(200);
    expect(ok.json.data).toMatchObject({ email: 'integration@acme.test', company_id: kit.emu.companyId });
    expect((await kit.send('GET', api('/v1/users/me'))).status).toBe(200);
    const none = await withApiToken('GET', '/v1/users/me', {});
    expect(none).toMatchObject({ status: 401, json: { success: false, error: 'unauthorized access', errorCode: 401 } });
    kit.emu.tokens.expire(kit.token);
    expect((await withApiToken('GET', '/v1/users/me', { 'x-api-token': kit.token })).status).toBe(401);
  });

  it('persons: exact email search, updated_since with update_time order and cursor paging', async () => {
    const ana = kit.emu.addPerson({ email: 'Ana@Acme.test', name: 'Ana Lima' });
    kit.clock.advance(1000);
    const ids = [1, 2, 3].map((n) => kit.emu.addPerson({ email: `p${n}@acme.test` }));
    const hit = await kit.send('GET', api('/api/v2/persons/search?term=ana%40acme.test&fields=email&exact_match=true'));
    expect(hit.json.data.items).toEqual([expect.objectContaining({ item: expect.objectContaining({ id: ana, emails: ['Ana@Acme.test'] }) })]);
    expect((await kit.send('GET', api('/api/v2/persons/search?term=a&fields=email'))).status).toBe(400);
    expect((await kit.send('GET', api('/api/v2/persons/search?term=ana&fields=mail'))).status).toBe(400);

    const since = new Date(T0 + 1000).toISOString().replace('.000', '');
    const p1 = await kit.send('GET', api(`/api/v2/persons?updated_since=${since}&sort_by=update_time&limit=2`));
    expect(p1.json.data.map((p: { id: number }) => p.id)).toEqual(ids.slice(0, 2));
    expect(p1.json.data[0].update_time).toBe(since);
    const p2 = await kit.send('GET', api(`/api/v2/persons?updated_since=${since}&sort_by=update_time&limit=2&cursor=${p1.json.additional_data.next_cursor}`));
    expect(p2.json.data.map((p: { id: number }) => p.id)).toEqual(ids.slice(2));
    expect(p2.json.additional_data.next_cursor).toBeNull();
    expect((await kit.send('GET', api('/api/v2/persons?updated_since=yesterday'))).status).toBe(400);
    expect((await kit.send('GET', api('/api/v2/persons?since=2026-01-01T00:00:00Z'))).status).toBe(400);
    expect((await kit.send('GET', api('/api/v2/persons?limit=501'))).status).toBe(400);
  });

  it("activities: person_id is read-only (participants instead), strict fields, listed by person", async () => {
    const ana = kit.emu.addPerson({ email: 'ana@acme.test' });
    const readOnly = await kit.send('POST', api('/api/v2/activities'), { subject: 'x', type: 'call', person_id: ana });
    expect(readOnly).toMatchObject({ status: 400, json: { success: false, code: 'ERR_BAD_REQUEST', error: "'person_id' is a read-only field. Add a primary participant to set 'person_id' instead." } });
    expect((await kit.send('POST', api('/api/v2/activities'), { type: 'fax' })).status).toBe(400);
    expect((await kit.send('POST', api('/api/v2/activities'), { due_time: '9:30' })).status).toBe(400);
    expect((await kit.send('POST', api('/api/v2/activities'), { done: 1 })).status).toBe(400);
    expect((await kit.send('POST', api('/api/v2/activities'), { participants: [{ person_id: ana, primary_flag: true }] })).status).toBe(400);
    const created = await kit.send('POST', api('/api/v2/activities'), { subject: 'Call', type: 'call', done: true, due_date: '2026-03-02', due_time: '09:00', duration: '00:05', note: 'hi', participants: [{ person_id: ana, primary: true }] });
    expect(created.status).toBe(200);
    expect(created.json.data).toMatchObject({ person_id: ana, done: true, duration: '00:05', participants: [{ person_id: ana, primary_flag: true }] });
    const listed = await kit.send('GET', api(`/api/v2/activities?person_id=${ana}`));
    expect(listed.json.data.map((a: { id: number }) => a.id)).toEqual([created.json.data.id]);
  });

  it('person fields: created with a hash key, a second create with the same name is another field; PATCH custom_fields checks keys and types', async () => {
    const ana = kit.emu.addPerson({ email: 'ana@acme.test' });
    const f1 = await kit.send('POST', api('/v1/personFields'), { name: 'Cadenza status', field_type: 'varchar' });
    const f2 = await kit.send('POST', api('/v1/personFields'), { name: 'Cadenza status', field_type: 'varchar' });
    expect(f1.json.data.key).toMatch(/^[0-9a-f]{40}$/);
    expect(f2.json.data.key).not.toBe(f1.json.data.key);
    const key = f1.json.data.key as string;
    expect((await kit.send('PATCH', api(`/api/v2/persons/${ana}`), { custom_fields: { [key]: 'active' } })).status).toBe(200);
    expect(kit.emu.personFieldValues(ana)).toEqual({ 'Cadenza status': 'active' });
    expect((await kit.send('PATCH', api(`/api/v2/persons/${ana}`), { custom_fields: { nope: 'x' } })).status).toBe(400);
    expect((await kit.send('PATCH', api(`/api/v2/persons/${ana}`), { custom_fields: { [key]: 5 } })).status).toBe(400);
    expect((await kit.send('PATCH', api(`/api/v2/persons/${ana}`), { custom_fields: { [key]: null } })).status).toBe(200);
    expect(kit.emu.personFieldValues(ana)).toEqual({});
  });

  it('burst limit per token per 2 s, search 10 per 2 s, the daily budget; headers on every answer', async () => {
    const first = await withApiToken('GET', '/v1/users/me', { 'x-api-token': kit.token });
    expect(first.headers.get('x-ratelimit-limit')).toBe('20');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('19');
    expect(first.headers.get('x-ratelimit-reset')).toBe('2');
    for (let i = 0; i < 19; i++) await withApiToken('GET', '/v1/users/me', { 'x-api-token': kit.token });
    const over = await withApiToken('GET', '/v1/users/me', { 'x-api-token': kit.token });
    expect(over.status).toBe(429);
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    kit.clock.advance(2000);
    for (let i = 0; i < 10; i++) expect((await kit.send('GET', api('/api/v2/persons/search?term=zz&fields=email'))).status).toBe(200);
    expect((await kit.send('GET', api('/api/v2/persons/search?term=zz&fields=email'))).status).toBe(429);
    // 20 × 2 (users/me) + 10 × 20 (searches) spent of 1000: 76 lists at 10 each, paced within the burst limit, spend the rest.
    kit.clock.advance(2000);
    let lists = 0;
    for (let last = 200; last === 200; lists++) {
      kit.clock.advance(100);
      last = (await kit.send('GET', api('/api/v2/persons'))).status;
    }
    expect(lists).toBe(77);
    kit.clock.advance(2000);
    const spent = await withApiToken('GET', '/api/v2/persons', { 'x-api-token': kit.token });
    expect(spent.headers.get('x-daily-requests-left')).toBe(String(kit.emu.rateStats().dailyTokensLeft));
    expect(spent.json.error).toContain('Daily');
    expect(kit.emu.rateStats().peakPerWindow).toBe(21);
  });

  it('outage() answers 503, slow() holds each answer for that long on the clock, faults by route name', async () => {
    kit.emu.outage(T0 + 1000);
    expect((await kit.send('GET', api('/v1/users/me'))).status).toBe(503);
    kit.clock.advance(1000);
    kit.emu.slow(500);
    let answered = false;
    const pending = kit.send('GET', api('/v1/users/me')).then((r) => ((answered = true), r));
    while (kit.emu.log.length < 2) await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    kit.clock.advance(500);
    expect((await pending).status).toBe(200);
    kit.emu.slow(0);
    kit.emu.faults.inject('users.me', { kind: 'respond', ...pipedriveErrors.internal() });
    expect((await kit.send('GET', api('/v1/users/me'))).status).toBe(500);
    expect(kit.emu.log.map((r) => r.outcome)).toEqual([503, 200, 500]);
  });

  it('filters of people and persons by filter_id', async () => {
    const a = kit.emu.addPerson({ email: 'a@acme.test' });
    kit.emu.addPerson({ email: 'b@acme.test' });
    const f = kit.emu.addFilter('Hot leads', [a]);
    expect((await kit.send('GET', api('/v1/filters?type=people'))).json.data).toEqual([expect.objectContaining({ id: f, name: 'Hot leads', type: 'people' })]);
    expect((await kit.send('GET', api(`/api/v2/persons?filter_id=${f}`))).json.data.map((p: { id: number }) => p.id)).toEqual([a]);
  });

  it('webhooks v2: basic auth, meta.action and user_id, previous holds what changed; duplicates and reordering', async () => {
    const sub = await kit.send('POST', api('/v1/webhooks'), { subscription_url: kit.sink.url, event_action: '*', event_object: 'person', http_auth_user: 'cadenza', http_auth_password: 's3cret', version: '2.0' });
    expect(sub.status).toBe(201);
    const ana = kit.emu.addPerson({ email: 'ana@acme.test', name: 'Ana' });
    kit.emu.webhooks.inject('duplicate');
    kit.emu.updatePerson(ana, { job_title: 'CTO' });
    kit.emu.webhooks.inject('reorder');
    kit.emu.updatePerson(ana, { job_title: 'CEO' });
    kit.emu.updatePerson(ana, { name: 'Ana Lima' });
    await kit.emu.webhooks.idle();
    const bodies = kit.sink.received.map((r) => r.body as { meta: { action: string; user_id: number }; previous: Record<string, unknown> | null });
    expect(bodies.map((b) => b.meta.action)).toEqual(['create', 'change', 'change', 'change', 'change']);
    expect(bodies.map((b) => b.previous)).toEqual([null, { job_title: null }, { job_title: null }, { name: 'Ana' }, { job_title: 'CTO' }]);
    expect(kit.sink.received[0]!.authorization).toBe(`Basic ${Buffer.from('cadenza:s3cret').toString('base64')}`);
    expect(bodies[1]!.meta.user_id).toBe(kit.emu.userId('integration@acme.test'));
    expect(kit.emu.webhooks.deliveries.every((d) => d.attempts.every((s) => s === 204))).toBe(true);
  });
});

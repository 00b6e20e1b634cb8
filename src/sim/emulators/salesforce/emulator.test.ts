import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim-clock.ts';
import { startSalesforceEmulator, type SalesforceEmulator, type SalesforceEmulatorOptions } from './emulator.ts';
import { sfErrors } from './errors.ts';

/**
 * The emulator's own promises, checked over HTTP: Salesforce's documented answers (OAuth errors,
 * the INVALID_SESSION_ID body, SOQL refusals, collection upsert results, the API allocation) that
 * the connector tests do not all reach.
 */
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const v = '/services/data/v60.0';
let clock: SimClock;
let emu: SalesforceEmulator;
let access: string;

async function start(opts: SalesforceEmulatorOptions = {}) {
  await emu?.close();
  emu = await startSalesforceEmulator({ clock, ...opts });
  access = (await token({ refresh_token: emu.authorize() })).json.access_token;
}

beforeEach(async () => {
  clock = new SimClock(T0);
  await start();
});
afterEach(async () => {
  await emu.close();
});

async function token(fields: Record<string, string>, type = 'application/x-www-form-urlencoded') {
  const body = new URLSearchParams({ grant_type: 'refresh_token', client_id: emu.client.id, client_secret: emu.client.secret, ...fields });
  const res = await fetch(`${emu.baseUrl}/services/oauth2/token`, { method: 'POST', headers: { 'content-type': type }, body: type.includes('json') ? JSON.stringify(Object.fromEntries(body)) : body.toString() });
  return { status: res.status, json: (await res.json()) as any };
}

async function call(method: string, path: string, body?: unknown, auth: string | null = access) {
  const res = await fetch(`${emu.baseUrl}${path}`, {
    method,
    headers: { ...(auth ? { authorization: `Bearer ${auth}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
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

const soql = (q: string) => call('GET', `${v}/query?q=${encodeURIComponent(q)}`);
const extField = () => emu.addCustomField('Task', { name: 'Ext__c', type: 'string', length: 20, externalId: true });
const upsert = (records: unknown[], allOrNone?: boolean) => call('PATCH', `${v}/composite/sobjects/Task/Ext__c`, { ...(allOrNone === undefined ? {} : { allOrNone }), records });
const t = (ext: string, fields: Record<string, unknown> = {}) => ({ attributes: { type: 'Task' }, Ext__c: ext, Subject: `s ${ext}`, ...fields });

describe('Salesforce emulator: OAuth and sessions', () => {
  it('refresh_token grant: the documented answer (no expires_in; the identity URL names the user); client and grant errors', async () => {
    const rt = emu.authorize();
    const ok = await token({ refresh_token: rt });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ token_type: 'Bearer', instance_url: emu.baseUrl, id: `${emu.baseUrl}/id/${emu.orgId}/${emu.integrationUserId}`, scope: 'refresh_token api' });
    expect(ok.json.access_token).toMatch(new RegExp(`^${emu.orgId}!`));
    expect(ok.json.expires_in).toBeUndefined();
    expect((await token({ refresh_token: rt, client_id: 'nope' })).json).toEqual({ error: 'invalid_client_id', error_description: 'client identifier invalid' });
    expect((await token({ refresh_token: rt, client_secret: 'nope' })).json).toEqual({ error: 'invalid_client', error_description: 'invalid client credentials' });
    expect((await token({ refresh_token: rt, grant_type: 'password' })).json.error).toBe('unsupported_grant_type');
    expect((await token({ refresh_token: rt }, 'application/json')).json.error).toBe('unsupported_grant_type');
    expect(await token({ refresh_token: 'made-up' })).toEqual({ status: 400, json: { error: 'invalid_grant', error_description: 'expired access/refresh token' } });
  });

  it('revoking the refresh token ends the grant and its sessions; the API answers INVALID_SESSION_ID; userinfo 403', async () => {
    const rt = emu.authorize();
    const s = (await token({ refresh_token: rt })).json.access_token;
    expect((await call('GET', '/services/oauth2/userinfo', undefined, s)).json).toMatchObject({ user_id: emu.integrationUserId, organization_id: emu.orgId, email: 'cadenza@acme.test' });
    const revoke = await fetch(`${emu.baseUrl}/services/oauth2/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(rt)}` });
    expect(revoke.status).toBe(200);
    expect((await token({ refresh_token: rt })).json.error).toBe('invalid_grant');
    const r = await call('GET', `${v}/sobjects/Task/describe`, undefined, s);
    expect([r.status, r.json]).toEqual([401, [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }]]);
    expect(r.headers.get('sforce-limit-info')).toBeNull();
    expect(await call('GET', '/services/oauth2/userinfo', undefined, s)).toMatchObject({ status: 403, json: 'Bad_OAuth_Token' });
    // Another grant's session is untouched.
    expect((await call('GET', `${v}/sobjects/Task/describe`)).status).toBe(200);
  });

  it('sessions end after their lifetime; no token or an unknown one is 401; a fault never pre-empts the session check', async () => {
    await start({ sessionTtlMs: 60_000 });
    expect((await call('GET', `${v}/sobjects/Task/describe`)).status).toBe(200);
    clock.advanceTo(T0 + 60_000);
    expect((await call('GET', `${v}/sobjects/Task/describe`)).status).toBe(401);
    emu.faults.inject('sobjects.describe', { kind: 'respond', ...sfErrors.internal() });
    expect((await call('GET', `${v}/sobjects/Task/describe`, undefined, null)).status).toBe(401);
    expect((await call('GET', `${v}/sobjects/Task/describe`, undefined, '00Dbogus!AQ')).status).toBe(401);
    expect(emu.faults.pending()).toBe(1);
  });
});

describe('Salesforce emulator: API allocation, versions, outages', () => {
  it('every answer carries Sforce-Limit-Info; past the allocation 403 REQUEST_LIMIT_EXCEEDED until calls age out of the rolling 24 h', async () => {
    await start({ dailyApiLimit: 3, sessionTtlMs: 48 * 3_600_000 });
    expect((await call('GET', `${v}/sobjects/Task/describe`)).headers.get('sforce-limit-info')).toBe('api-usage=1/3');
    clock.advanceTo(T0 + 3_600_000);
    await call('GET', `${v}/sobjects/Task/describe`);
    expect((await call('GET', `${v}/sobjects/Nope/describe`)).headers.get('sforce-limit-info')).toBe('api-usage=3/3');
    const refused = await call('GET', `${v}/sobjects/Task/describe`);
    expect([refused.status, refused.json]).toEqual([403, [{ message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' }]]);
    expect(refused.headers.get('sforce-limit-info')).toBe('api-usage=3/3');
    // The token endpoint is not counted.
    expect((await token({ refresh_token: emu.authorize() })).status).toBe(200);
    clock.advanceTo(T0 + 24 * 3_600_000);
    expect((await call('GET', `${v}/sobjects/Task/describe`)).headers.get('sforce-limit-info')).toBe('api-usage=3/3');
    expect(emu.apiUsage()).toEqual({ used: 3, max: 3, refused: 1 });
    expect([emu.apiPeak(3_600_000), emu.apiPeak(2 * 3_600_000)]).toEqual([2, 3]);
  });

  it('slow() holds every answer for that long on the emulator clock', async () => {
    emu.slow(1000);
    const pending = call('GET', `${v}/sobjects/Task/describe`);
    // Wait (without sleeping) until the request is parked on the clock, then move the clock.
    while (clock.nextTimerAt() === undefined) await new Promise((r) => setImmediate(r));
    expect(clock.nextTimerAt()).toBe(T0 + 1000);
    clock.advanceTo(T0 + 1000);
    expect((await pending).status).toBe(200);
  });

  it('an unserved version or resource is 404 NOT_FOUND; an outage is a 503 page', async () => {
    expect((await call('GET', '/services/data/v45.0/sobjects/Task/describe')).json).toEqual([{ message: 'The requested resource does not exist', errorCode: 'NOT_FOUND' }]);
    expect((await call('GET', `${v}/sobjects/Event/describe`)).status).toBe(404);
    emu.outage(T0 + 1000);
    const down = await call('GET', `${v}/sobjects/Task/describe`);
    expect([down.status, down.headers.get('content-type')]).toEqual([503, 'text/html']);
  });
});

describe('Salesforce emulator: SOQL', () => {
  it('the subset: IN without regard to case, AND, comparisons on dateTime, ORDER BY, LIMIT, relationship fields with attributes', async () => {
    const owner = emu.addUser({ email: 'rep@acme.test' });
    const acct = emu.addAccount("O'Brien & Co");
    const a = emu.add('Contact', { LastName: 'A', Email: 'Ana@Acme.test', AccountId: acct, OwnerId: owner });
    clock.advanceTo(T0 + 1000);
    const b = emu.add('Contact', { LastName: 'B', Email: 'bo@acme.test' });
    const r = await soql("SELECT Id, Email, Account.Name, Owner.Email FROM Contact WHERE Email IN ('ana@acme.test', 'BO@acme.test', 'x@y.z') AND SystemModstamp >= 2026-01-05T09:00:00Z ORDER BY SystemModstamp DESC, Id LIMIT 5");
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ totalSize: 2, done: true });
    expect(r.json.records.map((x: any) => x.Id)).toEqual([b, a]);
    expect(r.json.records[1]).toEqual({
      attributes: { type: 'Contact', url: `${v}/sobjects/Contact/${a}` },
      Id: a,
      Email: 'Ana@Acme.test',
      Account: { attributes: { type: 'Account', url: `${v}/sobjects/Account/${acct}` }, Name: "O'Brien & Co" },
      Owner: { attributes: { type: 'User', url: `${v}/sobjects/User/${owner}` }, Email: 'rep@acme.test' },
    });
    expect(r.json.records[0].Account).toBeNull();
    expect((await soql("SELECT Id FROM Account WHERE Name = 'O\\'Brien & Co'")).json.records.map((x: any) => x.Id)).toEqual([acct]);
    expect((await soql('SELECT Id FROM Contact WHERE SystemModstamp > 2026-01-05T09:00:00.000+00:00')).json.totalSize).toBe(1);
  });

  it('outside the subset is MALFORMED_QUERY; unknown objects and fields, quoted dateTimes and long text filters are refused as Salesforce refuses them', async () => {
    for (const q of [
      "SELECT Id FROM Contact WHERE Email = 'a' OR Email = 'b'",
      'SELECT COUNT() FROM Contact',
      'SELECT Id, (SELECT Id FROM Tasks) FROM Contact',
      "SELECT Id FROM Contact WHERE Email LIKE 'a%'",
      'SELECT Id FROM Contact LIMIT 5 OFFSET 2',
      "SELECT Id FROM Contact WHERE Email = 'unterminated",
      'SELECT Id FROM Contact; DELETE',
      'SELECT FROM Contact',
      '',
    ]) {
      const r = await soql(q);
      expect([q, r.status, r.json[0].errorCode]).toEqual([q, 400, 'MALFORMED_QUERY']);
    }
    expect((await soql('SELECT Id FROM Widget__c')).json[0]).toEqual({ message: "sObject type 'Widget__c' is not supported.", errorCode: 'INVALID_TYPE' });
    expect((await soql('SELECT Id, Nope FROM Contact')).json[0]).toMatchObject({ errorCode: 'INVALID_FIELD', message: expect.stringContaining("No such column 'Nope' on entity 'Contact'") });
    expect((await soql("SELECT Id FROM Contact WHERE SystemModstamp > '2026-01-05T09:00:00Z'")).json[0]).toMatchObject({ errorCode: 'INVALID_FIELD', message: expect.stringContaining('should not be enclosed in quotes') });
    expect((await soql("SELECT Id FROM Task WHERE Description = 'x'")).json[0]).toMatchObject({ errorCode: 'INVALID_FIELD', message: "field 'Description' can not be filtered in a query call" });
    expect((await soql('SELECT Id, Who.Name FROM Task')).json[0].errorCode).toBe('INVALID_FIELD');
  });

  it('deleted records: left out of query, found by queryAll with IsDeleted while in the Recycle Bin (15 days)', async () => {
    await start({ sessionTtlMs: 30 * 24 * 3_600_000 });
    const c = emu.add('Contact', { LastName: 'Gone' });
    emu.remove('Contact', c);
    expect((await soql('SELECT Id FROM Contact')).json.totalSize).toBe(0);
    const all = await call('GET', `${v}/queryAll?q=${encodeURIComponent('SELECT Id, IsDeleted FROM Contact')}`);
    expect(all.json.records).toMatchObject([{ Id: c, IsDeleted: true }]);
    expect((await call('PATCH', `${v}/sobjects/Contact/${c}`, { Title: 'x' })).json[0].errorCode).toBe('ENTITY_IS_DELETED');
    clock.advanceTo(T0 + 15 * 24 * 3_600_000);
    expect((await call('GET', `${v}/queryAll?q=${encodeURIComponent('SELECT Id FROM Contact')}`)).json.totalSize).toBe(0);
  });

  it('pages by nextRecordsUrl; a query locator unused for 15 minutes is INVALID_QUERY_LOCATOR', async () => {
    await start({ queryBatchSize: 2 });
    for (let i = 0; i < 5; i++) emu.add('Contact', { LastName: `c${i}` });
    const first = await soql('SELECT Id, LastName FROM Contact ORDER BY LastName');
    expect(first.json).toMatchObject({ totalSize: 5, done: false });
    expect(first.json.records.map((r: any) => r.LastName)).toEqual(['c0', 'c1']);
    const second = await call('GET', first.json.nextRecordsUrl);
    expect(second.json.records.map((r: any) => r.LastName)).toEqual(['c2', 'c3']);
    const third = await call('GET', second.json.nextRecordsUrl);
    expect(third.json).toMatchObject({ done: true, records: [{ LastName: 'c4' }] });
    expect(third.json.nextRecordsUrl).toBeUndefined();
    clock.advanceTo(T0 + 15 * 60_000 + 1);
    expect((await call('GET', second.json.nextRecordsUrl)).json[0].errorCode).toBe('INVALID_QUERY_LOCATOR');
  });
});

describe('Salesforce emulator: writes', () => {
  it('collection upsert by external id: created, then matched without regard to case; per-record errors with statusCode and fields', async () => {
    extField();
    const who = emu.add('Contact', { LastName: 'A' });
    const acct = emu.addAccount('A');
    const first = await upsert([t('k1', { WhoId: who, TaskSubtype: 'Call', Status: 'Completed' }), t('k2', { Subject: 'x'.repeat(256) }), t('k3', { CallType: 'Sideways' }), t('k4', { WhoId: acct })]);
    expect(first.status).toBe(200);
    expect(first.json[0]).toEqual({ id: expect.stringMatching(/^00T\w{15}$/), success: true, errors: [], created: true });
    expect(first.json.slice(1).map((r: any) => [r.success, r.errors[0].statusCode, r.errors[0].fields])).toEqual([
      [false, 'STRING_TOO_LONG', ['Subject']],
      [false, 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST', ['CallType']],
      [false, 'FIELD_INTEGRITY_EXCEPTION', ['WhoId']],
    ]);
    expect(emu.records('Task')).toHaveLength(1);
    expect(emu.records('Task')[0]).toMatchObject({ Priority: 'Normal', Status: 'Completed', OwnerId: emu.integrationUserId, LastModifiedById: emu.integrationUserId });

    // The update path: TaskSubtype is createable, not updateable.
    const again = await upsert([t('K1', { TaskSubtype: 'Call' }), t('k1', {}), t('k5', {}), t('k5', {})]);
    // The same key twice in one request (K1 and k1 are one key): each of them refused.
    expect(again.json.map((r: any) => r.errors.some((e: any) => e.statusCode === 'DUPLICATE_VALUE'))).toEqual([true, true, true, true]);
    const update = await upsert([t('K1', { TaskSubtype: 'Call' })]);
    expect(update.json[0]).toEqual({
      success: false,
      errors: [{ statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE', message: expect.stringContaining('Unable to create/update fields: TaskSubtype'), fields: ['TaskSubtype'] }],
    });
    const plain = await upsert([t('K1', { Subject: 'changed' })]);
    expect(plain.json[0]).toEqual({ id: first.json[0].id, success: true, errors: [], created: false });
    expect(emu.records('Task')).toHaveLength(1);
    expect(emu.records('Task')[0]!.Subject).toBe('changed');
  });

  it('collection upsert: allOrNone rolls back; a missing key, type or external-id field, an unknown field, a wrong JSON type, over 200 records', async () => {
    extField();
    const rolled = await upsert([t('a'), t('b', { Status: 'Bogus' })], true);
    expect(rolled.json[0].errors[0].statusCode).toBe('ALL_OR_NONE_OPERATION_ROLLED_BACK');
    expect(emu.records('Task')).toHaveLength(0);
    expect((await upsert([{ attributes: { type: 'Task' }, Subject: 'no key' }])).json[0].errors[0]).toMatchObject({ statusCode: 'MISSING_ARGUMENT', message: 'Ext__c not specified' });
    expect((await upsert([{ Ext__c: 'x' }])).json).toEqual([{ message: 'Must send a concrete entity type.', errorCode: 'INVALID_TYPE' }]);
    expect((await upsert([t('x', { Bogus__c: 1 })])).json[0]).toMatchObject({ errorCode: 'INVALID_FIELD', message: "No such column 'Bogus__c' on sobject of type Task" });
    expect((await upsert([t('x', { CallDurationInSeconds: 'long' })])).json[0].errorCode).toBe('JSON_PARSER_ERROR');
    expect((await upsert(Array.from({ length: 201 }, (_, i) => t(`k${i}`)))).json[0].errorCode).toBe('EXCEEDED_ID_LIMIT');
    const notExt = await call('PATCH', `${v}/composite/sobjects/Task/Subject`, { records: [t('x')] });
    expect([notExt.status, notExt.json[0].message]).toEqual([404, 'Provided external ID field does not exist or is not accessible: Subject']);
    expect(emu.records('Task')).toHaveLength(0);
  });

  it('PATCH a record: 204, stamped by the session user; 404 for a missing one; a read-only field refused', async () => {
    const c = emu.add('Contact', { LastName: 'A' });
    clock.advanceTo(T0 + 5000);
    expect((await call('PATCH', `${v}/sobjects/Contact/${c}`, { Title: 'CEO' })).status).toBe(204);
    expect(emu.store.get('Contact', c)).toMatchObject({ Title: 'CEO', LastModifiedById: emu.integrationUserId, SystemModstamp: '2026-01-05T09:00:05.000+0000' });
    expect((await call('PATCH', `${v}/sobjects/Contact/003000000000000AAA`, { Title: 'x' })).status).toBe(404);
    const ro = await call('PATCH', `${v}/sobjects/Contact/${c}`, { SystemModstamp: '2020-01-01T00:00:00Z' });
    expect([ro.status, ro.json[0].errorCode]).toEqual([400, 'INVALID_FIELD_FOR_INSERT_UPDATE']);
    const required = await call('PATCH', `${v}/sobjects/Contact/${c}`, { LastName: null });
    expect(required.json[0]).toMatchObject({ errorCode: 'REQUIRED_FIELD_MISSING', fields: ['LastName'] });
  });

  it('describe lists fields with their properties, custom ones once added', async () => {
    const before = await call('GET', `${v}/sobjects/Task/describe`);
    expect(before.json.keyPrefix).toBe('00T');
    expect(before.json.fields.find((f: any) => f.name === 'TaskSubtype')).toMatchObject({ createable: true, updateable: false, type: 'picklist' });
    expect(before.json.fields.some((f: any) => f.name === 'Ext__c')).toBe(false);
    extField();
    const after = await call('GET', `${v}/sobjects/Task/describe`);
    expect(after.json.fields.find((f: any) => f.name === 'Ext__c')).toMatchObject({ custom: true, externalId: true, length: 20, createable: true });
  });
});

describe('Salesforce emulator: list views', () => {
  it('lists Contact views, and pages their results by limit and offset (1–2000, 0–2000)', async () => {
    for (let i = 0; i < 3; i++) emu.add('Contact', { LastName: `c${i}`, Email: `c${i}@acme.test` });
    const id = emu.addListView({ label: 'All', developerName: 'AllContacts', filter: () => true });
    const list = await call('GET', `${v}/sobjects/Contact/listviews`);
    expect(list.json).toMatchObject({ done: true, size: 1, listviews: [{ id, label: 'All', developerName: 'AllContacts', resultsUrl: `${v}/sobjects/Contact/listviews/${id}/results` }] });
    const page = await call('GET', `${v}/sobjects/Contact/listviews/${id}/results?limit=2&offset=1`);
    expect(page.json).toMatchObject({ id, size: 3, done: true });
    expect(page.json.records.map((r: any) => r.columns.find((c: any) => c.fieldNameOrPath === 'Email').value)).toEqual(['c1@acme.test', 'c2@acme.test']);
    expect((await call('GET', `${v}/sobjects/Contact/listviews/${id}/results?limit=1`)).json.done).toBe(false);
    expect((await call('GET', `${v}/sobjects/Contact/listviews/${id}/results?limit=0`)).status).toBe(400);
    expect((await call('GET', `${v}/sobjects/Contact/listviews/${id}/results?offset=2001`)).status).toBe(400);
    expect((await call('GET', `${v}/sobjects/Contact/listviews/00B000000000000AAA/results`)).status).toBe(404);
  });
});

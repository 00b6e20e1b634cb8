import { afterEach, describe, expect, it, vi } from 'vitest';
import { SimClock } from '../../sim-clock.ts';
import { startSalesforceEmulator, type SalesforceEmulator, type SalesforceEmulatorOptions } from './emulator.ts';

/**
 * The emulator's Change Data Capture over CometD, checked over HTTP as a Bayeux client sees it:
 * the event shape, replay ids and the replay extension (-1, -2, an id), the 72 h kept, the
 * documented refusals, and the held connect.
 */
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const HOUR = 3_600_000;
let clock: SimClock;
let emu: SalesforceEmulator;
let access: string;
let refreshToken: string;

async function start(opts: SalesforceEmulatorOptions = { changeDataCapture: true }) {
  clock = new SimClock(T0);
  emu = await startSalesforceEmulator({ clock, ...opts });
  refreshToken = emu.authorize();
  await login();
}

/** A new access token (a session ends 2 h after it was issued). */
async function login() {
  const body = new URLSearchParams({ grant_type: 'refresh_token', client_id: emu.client.id, client_secret: emu.client.secret, refresh_token: refreshToken });
  const res = await fetch(`${emu.baseUrl}/services/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
  access = ((await res.json()) as { access_token: string }).access_token;
}

afterEach(async () => {
  await emu?.close();
});

async function bayeux(messages: unknown[], auth = access): Promise<{ status: number; body: any[] }> {
  const res = await fetch(`${emu.baseUrl}/cometd/60.0`, { method: 'POST', headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body: JSON.stringify(messages) });
  return { status: res.status, body: (await res.json()) as any[] };
}

async function subscribe(channel: string, replay?: number) {
  const hs = await bayeux([{ channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] }]);
  const clientId = hs.body[0].clientId as string;
  const sub = await bayeux([{ channel: '/meta/subscribe', clientId, subscription: channel, ...(replay === undefined ? {} : { ext: { replay: { [channel]: replay } } }) }]);
  return { clientId, sub: sub.body[0] };
}

const connect = async (clientId: string, timeout = 0) => (await bayeux([{ channel: '/meta/connect', clientId, connectionType: 'long-polling', advice: { timeout } }])).body;

describe('Salesforce emulator: Change Data Capture over CometD', () => {
  it('handshake, subscribe with -2, connect: each committed write as a change event with its header and a growing replay id', async () => {
    await start();
    const hs = await bayeux([{ channel: '/meta/handshake', version: '1.0', supportedConnectionTypes: ['long-polling'] }]);
    expect(hs.body[0]).toMatchObject({ channel: '/meta/handshake', successful: true, supportedConnectionTypes: ['long-polling'], ext: { replay: true } });
    const ana = emu.add('Contact', { LastName: 'Ana', Email: 'ana@acme.test' });
    clock.advance(1000);
    emu.update('Contact', ana, { Title: 'CEO' });
    emu.remove('Contact', ana);
    emu.add('Task', { Subject: 'not selected for CDC' });
    const { clientId, sub } = await subscribe('/data/ChangeEvents', -2);
    expect(sub).toMatchObject({ successful: true, subscription: '/data/ChangeEvents' });
    const answer = await connect(clientId);
    expect(answer.at(-1)).toMatchObject({ channel: '/meta/connect', successful: true });
    const events = answer.slice(0, -1);
    expect(events.map((e: any) => [e.channel, e.data.payload.ChangeEventHeader.changeType, e.data.event.replayId])).toEqual([
      ['/data/ChangeEvents', 'CREATE', 1],
      ['/data/ChangeEvents', 'UPDATE', 2],
      ['/data/ChangeEvents', 'DELETE', 3],
    ]);
    expect(events[1].data.payload).toMatchObject({
      ChangeEventHeader: { entityName: 'Contact', recordIds: [ana], changeType: 'UPDATE', commitTimestamp: T0 + 1000, commitUser: emu.records('User')[0]!.Id, sequenceNumber: 1 },
      Title: 'CEO',
    });
    expect(events[1].data.payload.ChangeEventHeader.changedFields).toEqual(expect.arrayContaining(['Title', 'LastModifiedDate']));
    expect(events[0].data.payload).toMatchObject({ LastName: 'Ana', Email: 'ana@acme.test' });
    // Delivered once: the next connect has nothing.
    expect(await connect(clientId)).toHaveLength(1);
    expect((await bayeux([{ channel: '/meta/disconnect', clientId }])).body[0]).toMatchObject({ successful: true });
    expect((await connect(clientId))[0]).toMatchObject({ successful: false, error: '403::Unknown client', advice: { reconnect: 'handshake' } });
  });

  it('replay from an id gives what follows it; -1 only new events; a per-entity channel only its entity', async () => {
    await start();
    const ana = emu.add('Contact', { LastName: 'Ana' });
    emu.add('Lead', { LastName: 'Bo', Company: 'Bo Inc' });
    emu.update('Contact', ana, { Title: 'CEO' });
    const after1 = await subscribe('/data/ChangeEvents', 1);
    expect((await connect(after1.clientId)).slice(0, -1).map((e: any) => e.data.event.replayId)).toEqual([2, 3]);
    const news = await subscribe('/data/ChangeEvents', -1);
    expect(await connect(news.clientId)).toHaveLength(1);
    emu.update('Contact', ana, { Title: 'Chair' });
    expect((await connect(news.clientId)).slice(0, -1).map((e: any) => e.data.event.replayId)).toEqual([4]);
    const leads = await subscribe('/data/LeadChangeEvent', -2);
    expect((await connect(leads.clientId)).slice(0, -1).map((e: any) => [e.channel, e.data.payload.ChangeEventHeader.entityName])).toEqual([['/data/LeadChangeEvent', 'Lead']]);
  });

  it('events are kept 72 hours: a replay id whose successors are gone, or one never given, is refused with the documented text', async () => {
    await start();
    emu.add('Contact', { LastName: 'Ana' });
    clock.advance(HOUR);
    emu.add('Contact', { LastName: 'Bo' });
    clock.advance(72 * HOUR - HOUR / 2);
    // Event 1 is gone; resuming after it (1) is fine, before it (0) is not.
    expect(emu.changeEvents().map((e) => e.replayId)).toEqual([2]);
    await login();
    expect((await subscribe('/data/ChangeEvents', 1)).sub.successful).toBe(true);
    expect((await subscribe('/data/ChangeEvents', 0)).sub).toMatchObject({
      successful: false,
      error: '400::The replayId {0} you provided was invalid. Please provide a valid ID, -2 to replay all events, or -1 to replay only new events.',
    });
    expect((await subscribe('/data/ChangeEvents', 99)).sub.successful).toBe(false);
  });

  it('an org without CDC (or an entity not selected) has no such channel; a bad session is 401', async () => {
    await start({});
    emu.add('Contact', { LastName: 'Ana' });
    expect(emu.changeEvents()).toEqual([]);
    expect((await subscribe('/data/ChangeEvents', -2)).sub).toMatchObject({ successful: false, error: '400::The channel you requested to subscribe to does not exist {/data/ChangeEvents}' });
    await emu.close();
    await start({ changeDataCapture: { entities: ['Contact'] } });
    expect((await subscribe('/data/LeadChangeEvent')).sub.successful).toBe(false);
    expect((await subscribe('/data/ContactChangeEvent')).sub.successful).toBe(true);
    expect((await bayeux([{ channel: '/meta/handshake', version: '1.0' }], 'nope')).status).toBe(401);
  });

  it('a connect with nothing waiting is held until an event or its timeout', async () => {
    await start();
    const { clientId } = await subscribe('/data/ChangeEvents', -1);
    // Held once the emulator has it (its log): then the event is what answers it.
    const arrived = (n: number) => vi.waitFor(() => expect(emu.log.filter((r) => r.route === 'cometd.connect')).toHaveLength(n));
    const held = connect(clientId, 30_000);
    await arrived(1);
    emu.add('Contact', { LastName: 'Ana' });
    expect((await held).slice(0, -1).map((e: any) => e.data.payload.ChangeEventHeader.changeType)).toEqual(['CREATE']);
    const quiet = connect(clientId, 30_000);
    await arrived(2);
    clock.advance(30_000);
    expect(await quiet).toHaveLength(1);
  });
});

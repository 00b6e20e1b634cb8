import { describe, expect, it } from 'vitest';
import { emulatorTestKit } from '../../../../test/emulators/kit.ts';
import { rawMessage } from '../messages.ts';
import { startGraphEmulator } from './emulator.ts';

/**
 * The sync side of the Graph emulator over HTTP: delta rounds (paging, deltaLink replay,
 * `@removed`, options kept in the links, eviction answered 410 with Location), and subscriptions
 * (handshake, lifetime cap, renewal, deletion, notifications, lifecycle events).
 */
const REP = 'rep@contoso.test';
const T0 = Date.UTC(2026, 10, 2, 8, 0, 0);
let n = 0;
const t = emulatorTestKit(REP, T0, (clock) => startGraphEmulator({ users: [REP], clock, deltaTokenTtlMs: 3_600_000, push: { retryDelayMs: 5 } }));

async function get(url: string, prefer?: string) {
  const res = await fetch(url.startsWith('http') ? url : `${t.emu.baseUrl}/${url}`, {
    headers: { authorization: `Bearer ${t.token}`, ...(prefer ? { prefer } : {}) },
  });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

const send = (method: string, path: string, body?: unknown) => t.send(method, `${t.emu.baseUrl}/${path}`, body);

const mail = () => rawMessage({ from: 'p@x.test', to: [REP], subject: 'Hi', messageId: `<d${++n}@x.test>` });
const idsOf = (j: { value: Array<{ id: string }> }) => j.value.map((v) => v.id);

describe('Graph emulator: delta', () => {
  it('pages the first round, then a deltaLink answers only the changes, a move out as @removed', async () => {
    const msgs = [];
    for (let i = 0; i < 3; i++) msgs.push(await t.emu.deliver(REP, mail()));
    const p1 = await get('me/mailFolders/inbox/messages/delta?$select=subject', 'odata.maxpagesize=2, IdType="ImmutableId"');
    expect(p1.headers.get('preference-applied')).toContain('ImmutableId');
    expect(idsOf(p1.json)).toEqual([msgs[0]!.immutableId, msgs[1]!.immutableId]);
    expect(Object.keys(p1.json.value[0]).sort()).toEqual(['@odata.etag', '@odata.type', 'id', 'subject']);
    expect(p1.json['@odata.deltaLink']).toBeUndefined();
    const p2 = await get(p1.json['@odata.nextLink'], 'odata.maxpagesize=2, IdType="ImmutableId"');
    expect(idsOf(p2.json)).toEqual([msgs[2]!.immutableId]);
    const deltaLink = p2.json['@odata.deltaLink'] as string;
    expect(deltaLink).toMatch(/messages\/delta\?\$deltatoken=/);

    const nothing = await get(deltaLink);
    expect(nothing.json.value).toEqual([]);
    const fresh = await t.emu.deliver(REP, mail());
    t.emu.mailbox(REP).move(msgs[0]!, 'junkemail', t.clock.now());
    const changes = await get(nothing.json['@odata.deltaLink'], 'IdType="ImmutableId"');
    // Order is not guaranteed (delta-query-overview.md); the options of the first call still apply.
    expect(changes.json.value).toHaveLength(2);
    expect(changes.json.value).toEqual(
      expect.arrayContaining([
        { '@odata.type': '#microsoft.graph.message', id: msgs[0]!.immutableId, '@removed': { reason: 'deleted' } },
        expect.objectContaining({ id: fresh.immutableId, subject: 'Hi' }),
      ]),
    );
    // The junk folder's own first round sees the moved message.
    expect(idsOf((await get('me/mailFolders/junkemail/messages/delta', 'IdType="ImmutableId"')).json)).toEqual([msgs[0]!.immutableId]);
  });

  it('$filter receivedDateTime ge bounds the round; other filters and options refused', async () => {
    await t.emu.deliver(REP, mail(), { receivedAt: T0 - 5 * 86_400_000 });
    const recent = await t.emu.deliver(REP, mail());
    const f = encodeURIComponent(`receivedDateTime ge ${new Date(T0 - 86_400_000).toISOString().replace('.000', '')}`);
    expect(idsOf((await get(`me/mailFolders/inbox/messages/delta?$filter=${f}`, 'IdType="ImmutableId"')).json)).toEqual([recent.immutableId]);
    expect((await get(`me/mailFolders/inbox/messages/delta?$filter=${encodeURIComponent("subject eq 'x'")}`)).status).toBe(400);
    expect((await get('me/mailFolders/inbox/messages/delta?$orderby=subject')).status).toBe(400);
    expect((await get('me/mailFolders/nosuch/messages/delta')).status).toBe(404);
  });

  it('evicted tokens: 410 Gone with the chosen code and a Location to start again; tokens older than the TTL too', async () => {
    const round = await get('me/mailFolders/inbox/messages/delta');
    const link = round.json['@odata.deltaLink'] as string;
    t.emu.expireDeltaTokens(REP);
    const gone = await get(link);
    expect([gone.status, gone.json.error.code]).toEqual([410, 'syncStateNotFound']);
    expect(gone.headers.get('location')).toMatch(/\/v1\.0\/me\/mailFolders\/inbox\/messages\/delta\?\$deltatoken=$/);
    t.emu.expireDeltaTokens(REP, 'resyncRequired');
    expect((await get(link)).json.error.code).toBe('resyncRequired');
    const again = (await get('me/mailFolders/inbox/messages/delta')).json['@odata.deltaLink'] as string;
    expect((await get(again)).status).toBe(200);
    t.clock.advance(3_600_001);
    expect((await get(again)).status).toBe(410);
  });
});

describe('Graph emulator: subscriptions', () => {
  const body = (over: Record<string, unknown> = {}) => ({
    changeType: 'created',
    notificationUrl: t.sink.url,
    lifecycleNotificationUrl: t.sink.url,
    resource: "/me/mailFolders('inbox')/messages",
    expirationDateTime: new Date(T0 + 3_600_000).toISOString(),
    clientState: 'cs',
    ...over,
  });

  it('created after the handshake; capped lifetime; renewed by PATCH; notifications with clientState; deleted', async () => {
    expect((await send('POST', 'subscriptions', body({ expirationDateTime: new Date(T0 + 4231 * 60_000).toISOString() }))).json.error.message).toContain(
      '4230 minutes',
    );
    expect((await send('POST', 'subscriptions', body({ clientState: 'x'.repeat(129) }))).status).toBe(400);
    expect((await send('POST', 'subscriptions', body({ resource: '/me/events' }))).status).toBe(400);
    t.sink.received.length = 0;
    const created = await send('POST', 'subscriptions', body());
    expect(created.status).toBe(201);
    // Both URLs validated, each with the URL-encoded t.token.
    expect(t.sink.received.map((r) => r.query.validationToken?.startsWith('Validation: '))).toEqual([true, true]);
    const id = created.json.id as string;
    const patched = await send('PATCH', `subscriptions/${id}`, { expirationDateTime: new Date(T0 + 7_200_000).toISOString() });
    expect(patched.json.expirationDateTime).toBe('2026-11-02T10:00:00Z');

    const m = await t.emu.deliver(REP, mail());
    await t.emu.deliver(REP, mail(), { folder: 'junkemail' });
    await t.emu.push.idle();
    const notes = t.sink.received.slice(2).map((r) => (r.body as { value: Array<Record<string, unknown>> }).value[0]!);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ subscriptionId: id, clientState: 'cs', changeType: 'created', resourceData: { id: m.immutableId } });

    t.emu.subscriptions.lifecycle(id, 'reauthorizationRequired');
    await t.emu.push.idle();
    expect((t.sink.received.at(-1)!.body as { value: Array<{ lifecycleEvent: string }> }).value[0]!.lifecycleEvent).toBe('reauthorizationRequired');

    expect((await send('DELETE', `subscriptions/${id}`)).status).toBe(204);
    expect((await send('DELETE', `subscriptions/${id}`)).status).toBe(404);
  });

  it('a handshake that is not echoed fails the create; an expired subscription sends nothing', async () => {
    t.sink.echo = false;
    expect((await send('POST', 'subscriptions', body())).json.error.code).toBe('ValidationError');
    t.sink.echo = true;
    expect((await send('POST', 'subscriptions', body())).status).toBe(201);
    t.clock.advance(3_600_000);
    t.sink.received.length = 0;
    await t.emu.deliver(REP, mail());
    await t.emu.push.idle();
    expect(t.sink.received).toEqual([]);
  });
});

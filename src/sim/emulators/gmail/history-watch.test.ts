import { describe, expect, it } from 'vitest';
import { emulatorTestKit } from '../../../../test/emulators/kit.ts';
import { rawMessage } from '../messages.ts';
import { startGmailEmulator } from './emulator.ts';

/**
 * The sync side of the Gmail emulator over HTTP: history.list (types, labelId, paging, the 404 of
 * an expired id), getProfile, messages.list date terms, watch/stop and Pub/Sub push (coalescing,
 * expiry, redelivery until 2xx).
 */
const REP = 'rep@acme.test';
const T0 = Date.UTC(2026, 10, 2, 8, 0, 0);
let n = 0;
const t = emulatorTestKit(REP, T0, (clock) => startGmailEmulator({ users: [REP], clock, push: { retryDelayMs: 5 } }));
const call = (method: string, path: string, body?: unknown) => t.send(method, `${t.emu.baseUrl}/gmail/v1/users/me/${path}`, body);

const mail = () => rawMessage({ from: 'p@x.test', to: [REP], subject: 'Hi', messageId: `<h${++n}@x.test>` });

describe('Gmail emulator: history and push', () => {
  it('history.list: records after startHistoryId, historyTypes and labelId filters, pages, current historyId on every page', async () => {
    const start = (await call('GET', 'profile')).json.historyId as string;
    const a = await t.emu.deliver(REP, mail());
    const b = await t.emu.deliver(REP, mail(), { spam: true });
    t.emu.mailbox(REP).modifyLabels(b.id, ['INBOX'], ['SPAM']);
    const all = await call('GET', `history?startHistoryId=${start}`);
    expect(all.json.history.map((h: { messagesAdded?: unknown; labelsAdded?: unknown; labelsRemoved?: unknown }) => Object.keys(h).filter((k) => k !== 'id' && k !== 'messages'))).toEqual([
      ['messagesAdded'],
      ['messagesAdded'],
      ['labelsAdded'],
      ['labelsRemoved'],
    ]);
    expect(all.json.historyId).toBe(String(t.emu.mailbox(REP).historyId));
    expect(all.json.history[0].messagesAdded[0].message).toEqual({ id: a.id, threadId: a.threadId, labelIds: ['INBOX', 'UNREAD'] });
    // Ids rise with gaps.
    const idsSeen = all.json.history.map((h: { id: string }) => Number(h.id));
    expect(idsSeen).toEqual([...idsSeen].sort((x, y) => x - y));
    const added = await call('GET', `history?startHistoryId=${start}&historyTypes=messageAdded&maxResults=1`);
    expect(added.json.history).toHaveLength(1);
    const p2 = await call('GET', `history?startHistoryId=${start}&historyTypes=messageAdded&maxResults=1&pageToken=${added.json.nextPageToken}`);
    expect(p2.json.history[0].messagesAdded[0].message.id).toBe(b.id);
    expect(p2.json.nextPageToken).toBeUndefined();
    expect((await call('GET', `history?startHistoryId=${start}&labelId=SENT`)).json.history).toBeUndefined();
    // Nothing after the current id: no `history` at all.
    expect((await call('GET', `history?startHistoryId=${all.json.historyId}`)).json).toEqual({ historyId: all.json.historyId });
    expect((await call('GET', 'history')).status).toBe(400);
    expect((await call('GET', `history?startHistoryId=${start}&historyTypes=everything`)).status).toBe(400);
    // Expired: any older id is a 404; the current one still works.
    t.emu.expireHistory(REP);
    expect((await call('GET', `history?startHistoryId=${start}`)).json.error).toMatchObject({ code: 404, errors: [{ reason: 'notFound' }] });
    expect((await call('GET', `history?startHistoryId=${all.json.historyId}`)).status).toBe(200);
  });

  it('messages.list: after:/before: (epoch seconds, dates) and newer_than:; SPAM by labelIds', async () => {
    await t.emu.deliver(REP, mail(), { internalDate: T0 - 3 * 86_400_000 });
    const recent = await t.emu.deliver(REP, mail());
    const spam = await t.emu.deliver(REP, mail(), { spam: true });
    const q = async (query: string, extra = '') => ((await call('GET', `messages?q=${encodeURIComponent(query)}${extra}`)).json.messages ?? []).map((m: { id: string }) => m.id);
    expect(await q(`after:${Math.floor((T0 - 86_400_000) / 1000)}`)).toEqual([recent.id]);
    expect(await q('newer_than:2d')).toEqual([recent.id]);
    expect(await q('older_than:2d')).toHaveLength(1);
    expect(await q('after:2026/11/01 before:2026/11/02')).toEqual([]);
    expect(await q('newer_than:2d', '&labelIds=SPAM')).toEqual([spam.id]);
    expect((await call('GET', `messages?q=${encodeURIComponent('newer_than:2w')}`)).status).toBe(400);
  });

  it('watch: topic checks, historyId and 7-day expiration, a notification at once, 1/s coalescing, stop, lapse', async () => {
    expect((await call('POST', 'watch', { topicName: 'nope' })).status).toBe(400);
    expect((await call('POST', 'watch', { topicName: 'projects/p/topics/none' })).status).toBe(404);
    t.emu.pubsub.createPushSubscription({ topic: 'projects/p/topics/gmail', name: 'projects/p/subscriptions/s', pushEndpoint: t.sink.url });
    const w = await call('POST', 'watch', { topicName: 'projects/p/topics/gmail', labelIds: ['INBOX'] });
    expect(w.json).toEqual({ historyId: String(t.emu.mailbox(REP).historyId), expiration: String(T0 + 7 * 86_400_000) });
    await t.emu.push.idle();
    expect(t.sink.received).toHaveLength(1);
    const body = t.sink.received[0]!.body as { message: { data: string; messageId: string; publishTime: string }; subscription: string };
    expect(body.subscription).toBe('projects/p/subscriptions/s');
    expect(JSON.parse(Buffer.from(body.message.data, 'base64').toString())).toEqual({ emailAddress: REP, historyId: w.json.historyId });

    // Within the same second: dropped (at most one a second per user).
    await t.emu.deliver(REP, mail());
    await t.emu.push.idle();
    expect(t.sink.received).toHaveLength(1);
    t.clock.advance(1_000);
    await t.emu.deliver(REP, mail());
    // Not INBOX: no notification.
    t.clock.advance(1_000);
    await t.emu.deliver(REP, mail(), { spam: true });
    await t.emu.push.idle();
    expect(t.sink.received).toHaveLength(2);

    // Redelivered while the endpoint does not answer 2xx.
    t.sink.status = 500;
    t.clock.advance(1_000);
    await t.emu.deliver(REP, mail());
    await t.emu.push.idle();
    expect(t.emu.push.log.at(-1)!.attempts).toEqual([500, 500, 500]);
    t.sink.status = 204;

    expect((await call('POST', 'stop')).status).toBe(204);
    t.clock.advance(1_000);
    await t.emu.deliver(REP, mail());
    await t.emu.push.idle();
    expect(t.sink.received).toHaveLength(5);

    await call('POST', 'watch', { topicName: 'projects/p/topics/gmail' });
    t.clock.advance(7 * 86_400_000);
    await t.emu.deliver(REP, mail());
    await t.emu.push.idle();
    expect(t.sink.received).toHaveLength(6); // the one at watch(), none after the lapse
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../common/clock.ts';
import { seededRandom } from '../../../common/random.ts';
import { graphErrors } from '../../../sim/emulators/graph/errors.ts';
import { startGraphEmulator, type GraphEmulator } from '../../../sim/emulators/graph/emulator.ts';
import { regularId } from '../../../sim/emulators/graph/mailbox.ts';
import { rawMessage } from '../../../sim/emulators/messages.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../../test/leaks.ts';
import { createConnector } from '../registry.ts';

/**
 * A Microsoft 365 mailbox's folder actions against the Graph emulator, through the connector the
 * registry builds: out of Junk Email into the inbox (message move), flagged and read (PATCH), on
 * the immutable id the sync keys messages by, which the move keeps.
 */
const REP = 'rep@contoso.test';

let emu: GraphEmulator;
let handles: HandleCounts;
let seq = 0;

beforeEach(async () => {
  handles = handleCounts();
  emu = await startGraphEmulator({ users: [REP] });
});
afterEach(async () => {
  await emu.close();
  await expectNoLeaks(handles);
});

function connector(tokens: (o: { forceRefresh: boolean }) => Promise<string> = emu.tokenSource(REP)) {
  return createConnector(
    { id: '0192f7a0-0000-7000-8000-000000000002', email: REP, provider: 'graph', settings: {} },
    { clock: systemClock, random: seededRandom(2), credential: { kind: 'oauth', accessToken: 'unused' }, tokens, baseUrls: { graph: emu.baseUrl }, httpTimeoutMs: 5_000 },
    ['folders'],
  );
}

const junk = async () => emu.deliver(REP, rawMessage({ from: 'Peer <peer@warmup.test>', to: [REP], subject: `Hello ${++seq}`, messageId: `<g-${seq}@warmup.test>` }), { folder: 'junkemail' });

describe('Graph folder actions against the emulator', () => {
  it('moves a message out of Junk Email into the inbox under the same immutable id, flags it and marks it read; each change is in the change log', async () => {
    const c = connector();
    const m = await junk();
    const key = m.immutableId;
    const junkId = regularId(m);
    const changesBefore = emu.store.mailbox(REP)!.changes.length;

    expect(await c.moveToInbox(key)).toEqual({ status: 'done', key });
    expect(m.folder).toBe('inbox');
    // The regular id named the item in Junk Email; it names nothing now (concepts/outlook-immutable-id.md).
    expect(regularId(m)).not.toBe(junkId);
    expect(await c.flag(key)).toEqual({ status: 'done', key });
    expect(m.flagStatus).toBe('flagged');
    expect(m.isRead).toBe(false);
    expect(await c.markRead(key)).toEqual({ status: 'done', key });
    expect(m.isRead).toBe(true);
    expect(emu.store.mailbox(REP)!.changes.slice(changesBefore).map((x) => [x.type, x.folder])).toEqual([
      ['moved', 'inbox'],
      ['updated', 'inbox'],
      ['updated', 'inbox'],
    ]);
    // Again: the message stays in the inbox.
    expect(await c.moveToInbox(key)).toEqual({ status: 'done', key });
    expect(m.folder).toBe('inbox');
    expect(emu.requests.filter((r) => r.route === 'messages.move' || r.route === 'messages.update').map((r) => [r.method, r.outcome])).toEqual([
      ['POST', 201],
      ['PATCH', 200],
      ['PATCH', 200],
      ['POST', 201],
    ]);
    await c.close();
  });

  it('a message that is gone is not_found; a grant with Mail.Read only is forbidden; throttling is unavailable', async () => {
    const m = await junk();
    expect(await connector().moveToInbox('AAkALgnone')).toMatchObject({ status: 'not_found', reason: expect.stringMatching(/^Graph 404 ErrorItemNotFound/) });

    // A grant made when Cadenza asked for Mail.Read and Mail.Send (before Mail.ReadWrite).
    const old = emu.tokens.issue(REP, ['https://graph.microsoft.com/Mail.Read', 'https://graph.microsoft.com/Mail.Send']);
    expect(await connector(async () => old).moveToInbox(m.immutableId)).toMatchObject({ status: 'forbidden', reason: expect.stringMatching(/ErrorAccessDenied/) });
    expect(m.folder).toBe('junkemail');
    // Microsoft's tokens name their scopes short.
    const granted = emu.tokens.issue(REP, ['Mail.ReadWrite', 'Mail.Send']);
    expect(await connector(async () => granted).markRead(m.immutableId)).toEqual({ status: 'done', key: m.immutableId });

    emu.faults.inject('messages.move', { kind: 'respond', ...graphErrors.tooManyRequests('1') });
    expect(await connector().moveToInbox(m.immutableId)).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/TooManyRequests/) });
    expect(m.folder).toBe('junkemail');
  });
});

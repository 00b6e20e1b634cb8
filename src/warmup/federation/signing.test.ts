import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { federationIdentity, pairKey } from './identity.ts';
import { signRequest, verifySigned, SIGNATURE_WINDOW_MS, type KnownPeer, type VerifyDeps } from './signing.ts';
import { exchangeRequest, readBody } from './wire.ts';

const a = federationIdentity(randomBytes(32), 'https://a.example.test/', 'A');
const b = federationIdentity(randomBytes(32), 'https://b.example.test', 'B');
const c = federationIdentity(randomBytes(32), 'https://c.example.test', 'C');
const T = Date.UTC(2026, 11, 2, 12);
const req = { method: 'POST', path: '/federation/v1/exchange', body: Buffer.from('{"members":[],"schedule":[],"reports":[]}') };

/** B's view: A is a peer in `state`; nonces remembered in a set. */
function atB(state: KnownPeer['state'] | null, now = T): VerifyDeps {
  const seen = new Set<string>();
  return {
    me: b.card.signKey,
    now,
    peer: async (key) => (key === a.card.signKey && state ? { id: 'peer-a', state } : undefined),
    claimNonce: async (id, nonce) => !seen.has(`${id}:${nonce}`) && !!seen.add(`${id}:${nonce}`),
  };
}

describe('signed requests between installations', () => {
  it('the identity is derived from the master key: the same key gives the same card, and both sides compute one pair key', () => {
    const master = randomBytes(32);
    expect(federationIdentity(master, 'https://x.test', 'x').card).toEqual(federationIdentity(master, 'https://x.test', 'x').card);
    expect(a.card.url).toBe('https://a.example.test');
    expect(pairKey(a, b.card).equals(pairKey(b, a.card))).toBe(true);
    expect(pairKey(a, b.card).equals(pairKey(a, c.card))).toBe(false);
  });

  it('a request A signed for B verifies at B once', async () => {
    const deps = atB('active');
    const h = signRequest(a, b.card.signKey, req, T);
    expect(await verifySigned({ ...h }, req, deps)).toEqual({ ok: true, peer: { id: 'peer-a', state: 'active' } });
    expect(await verifySigned({ ...h }, req, deps)).toMatchObject({ ok: false, status: 401, reason: 'replayed' });
  });

  it('a changed body, path or method, or another signer, is a bad signature', async () => {
    const h = signRequest(a, b.card.signKey, req, T);
    expect(await verifySigned({ ...h }, { ...req, body: Buffer.from('{"members":[],"schedule":[],"reports":[] }') }, atB('active'))).toMatchObject({ ok: false, reason: 'bad-signature' });
    expect(await verifySigned({ ...h }, { ...req, path: '/federation/v1/leave' }, atB('active'))).toMatchObject({ ok: false, reason: 'bad-signature' });
    expect(await verifySigned({ ...h }, { ...req, method: 'RESPONSE' }, atB('active'))).toMatchObject({ ok: false, reason: 'bad-signature' });
    const forged = { ...signRequest(c, b.card.signKey, req, T), 'cadenza-key': a.card.signKey };
    expect(await verifySigned(forged, req, atB('active'))).toMatchObject({ ok: false, status: 401, reason: 'bad-signature' });
    const sig = Buffer.from(h['cadenza-signature'], 'base64');
    sig[0]! ^= 1;
    expect(await verifySigned({ ...h, 'cadenza-signature': sig.toString('base64') }, req, atB('active'))).toMatchObject({ ok: false, reason: 'bad-signature' });
  });

  it('a request signed for another installation is refused (it names its recipient)', async () => {
    const forC = signRequest(a, c.card.signKey, req, T);
    expect(await verifySigned({ ...forC }, req, atB('active'))).toMatchObject({ ok: false, reason: 'bad-signature' });
  });

  it('outside ±5 minutes is refused; at the edge it is not', async () => {
    expect(await verifySigned({ ...signRequest(a, b.card.signKey, req, T - SIGNATURE_WINDOW_MS - 1) }, req, atB('active'))).toMatchObject({ ok: false, reason: 'outside-window' });
    expect(await verifySigned({ ...signRequest(a, b.card.signKey, req, T + SIGNATURE_WINDOW_MS + 1) }, req, atB('active'))).toMatchObject({ ok: false, reason: 'outside-window' });
    expect(await verifySigned({ ...signRequest(a, b.card.signKey, req, T - SIGNATURE_WINDOW_MS) }, req, atB('active'))).toMatchObject({ ok: true });
  });

  it('an unknown peer, or one whose peering ended, is refused; a pending one is accepted (it proves the peer added us)', async () => {
    expect(await verifySigned({ ...signRequest(a, b.card.signKey, req, T) }, req, atB(null))).toMatchObject({ ok: false, status: 403, reason: 'unknown-peer' });
    expect(await verifySigned({ ...signRequest(a, b.card.signKey, req, T) }, req, atB('left'))).toMatchObject({ ok: false, status: 403, reason: 'peer-left' });
    expect(await verifySigned({ ...signRequest(a, b.card.signKey, req, T) }, req, atB('pending'))).toMatchObject({ ok: true });
  });

  it('missing or malformed headers are answered, not thrown', async () => {
    const h = signRequest(a, b.card.signKey, req, T);
    expect(await verifySigned({ ...h, 'cadenza-nonce': undefined }, req, atB('active'))).toMatchObject({ ok: false, status: 400, reason: 'missing-headers' });
    expect(await verifySigned({ ...h, 'cadenza-timestamp': 'soon' }, req, atB('active'))).toMatchObject({ ok: false, status: 400, reason: 'bad-timestamp' });
    expect(await verifySigned({ ...h, 'cadenza-key': 'not a key' }, req, { ...atB('active'), peer: async () => ({ id: 'x', state: 'active' }) })).toMatchObject({ ok: false, reason: 'bad-signature' });
  });
});

describe('the exchange body at the edge', () => {
  const member = { address: 'ann@a.test', provider: 'google', domain: 'a.test', timeZone: 'Europe/Berlin', dayStart: '09:00', dayEnd: '17:00', capacity: 10 };
  const body = (x: unknown) => Buffer.from(JSON.stringify(x));
  it('takes a well-formed body', () => {
    expect(readBody(exchangeRequest, body({ members: [member], schedule: [{ messageId: '<1@a.test>', sender: 'ann@a.test', receiver: 'bo@b.test', at: T }], reports: [] })).members).toHaveLength(1);
  });
  it.each([
    ['not JSON', Buffer.from('{'), 'not JSON'],
    ['a bad address', body({ members: [{ ...member, address: 'nobody' }], schedule: [], reports: [] }), 'members.0.address'],
    ['an unknown zone', body({ members: [{ ...member, timeZone: 'Mars/Olympus' }], schedule: [], reports: [] }), 'members.0.timeZone'],
    ['capacity over 200', body({ members: [{ ...member, capacity: 500 }], schedule: [], reports: [] }), 'members.0.capacity'],
    ['a message text smuggled in', body({ members: [], schedule: [{ messageId: '<1@a.test>', sender: 'ann@a.test', receiver: 'bo@b.test', at: T, text: 'hi' }], reports: [] }), 'schedule.0'],
    ['too many members', body({ members: Array.from({ length: 2001 }, () => member), schedule: [], reports: [] }), 'members'],
    ['a bad folder', body({ members: [], schedule: [], reports: [{ messageId: '<1@a.test>', folder: 'spam', at: T }] }), 'reports.0.folder'],
  ])('refuses %s with the field named', (_name, raw, field) => {
    expect(() => readBody(exchangeRequest, raw)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining(field) }));
  });
});

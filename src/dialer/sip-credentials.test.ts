import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ephemeralCredential, issueSipCredentials, type SipCredentialSettings } from './sip-credentials.ts';

const NOW = Date.UTC(2026, 0, 15, 9, 30, 0); // a fixed clock
const SETTINGS: SipCredentialSettings = {
  wsUrl: 'wss://sip.example.com:8443',
  domain: 'sip.example.com',
  sipSecret: 'sip-secret',
  turnUrls: ['turn:turn.example.com:3478?transport=udp', 'turns:turn.example.com:443?transport=tcp', 'stun:turn.example.com:3478'],
  turnSecret: 'turn-secret',
  ttlSeconds: 3600,
};

describe('ephemeral SIP and TURN credentials', () => {
  it('follows the TURN REST API scheme: username expiry:userId, password base64(HMAC-SHA1(secret, username))', () => {
    // The reference value, computed independently: the same as `echo -n 1768473000:alice | openssl dgst -sha1 -hmac sip-secret -binary | base64`.
    const c = ephemeralCredential('sip-secret', 'alice', 1_768_473_000);
    expect(c.username).toBe('1768473000:alice');
    expect(c.password).toBe('FxVKpNngzxEBmfxM97D0LnJmUNs=');
    expect(c.password).toBe(createHmac('sha1', 'sip-secret').update('1768473000:alice').digest('base64'));
    expect(c.password).toMatch(/^[A-Za-z0-9+/]{27}=$/);
  });

  it('issues SIP and TURN credentials that expire ttl seconds from the clock', () => {
    const user = '0b6f2a9e-5c1d-4f7e-9a2b-3c4d5e6f7a8b';
    const c = issueSipCredentials(SETTINGS, user, NOW);
    const expiry = NOW / 1000 + 3600;
    expect(c.sipUri).toBe(`sip:${user}@sip.example.com`);
    expect(c.authorizationUser).toBe(`${expiry}:${user}`);
    expect(c.password).toBe(ephemeralCredential('sip-secret', user, expiry).password);
    expect(c.expiresAt).toBe('2026-01-15T10:30:00.000Z');
    expect(c.iceServers).toEqual([
      { urls: [SETTINGS.turnUrls[0], SETTINGS.turnUrls[1]], username: `${expiry}:${user}`, credential: ephemeralCredential('turn-secret', user, expiry).password },
      { urls: ['stun:turn.example.com:3478'] },
    ]);
    // The two secrets give two passwords: a TURN credential does not register a phone.
    expect(c.iceServers[0]!.credential).not.toBe(c.password);
  });

  it('rounds the clock down to the second, so one instant gives one credential', () => {
    expect(issueSipCredentials(SETTINGS, 'bob', NOW + 999).authorizationUser).toBe(issueSipCredentials(SETTINGS, 'bob', NOW).authorizationUser);
  });

  it('offers TURN URLs without a secret as nothing (coturn would refuse them), STUN as is', () => {
    const c = issueSipCredentials({ ...SETTINGS, turnSecret: undefined }, 'bob', NOW);
    expect(c.iceServers).toEqual([{ urls: ['stun:turn.example.com:3478'] }]);
  });

  it('refuses a user id that would break the username or the SIP URI', () => {
    for (const bad of ['', 'a:b', 'a@b', 'a b', 'x'.repeat(200)]) expect(() => issueSipCredentials(SETTINGS, bad, NOW)).toThrow(/not a SIP user id/);
  });

  it("a recorded workspace's credential signs ':rec' into the username; the SIP identity and TURN stay the user's", () => {
    const plain = issueSipCredentials(SETTINGS, 'bob', NOW);
    const rec = issueSipCredentials(SETTINGS, 'bob', NOW, { record: true });
    expect(rec.authorizationUser).toBe(`${plain.authorizationUser}:rec`);
    expect(rec.password).toBe(createHmac('sha1', SETTINGS.sipSecret).update(rec.authorizationUser).digest('base64'));
    expect(rec.password).not.toBe(plain.password);
    expect([rec.sipUri, rec.iceServers]).toEqual([plain.sipUri, plain.iceServers]);
  });

  it("signs the rep's trunk number last, after ':rec' when there is one; refuses what is not E.164", () => {
    const plain = issueSipCredentials(SETTINGS, 'bob', NOW);
    const numbered = issueSipCredentials(SETTINGS, 'bob', NOW, { phoneNumber: '+442079460123' });
    expect(numbered.authorizationUser).toBe(`${plain.authorizationUser}:+442079460123`);
    expect(issueSipCredentials(SETTINGS, 'bob', NOW, { record: true, phoneNumber: '+442079460123' }).authorizationUser).toBe(`${plain.authorizationUser}:rec:+442079460123`);
    expect(numbered.password).toBe(createHmac('sha1', SETTINGS.sipSecret).update(numbered.authorizationUser).digest('base64'));
    expect([numbered.sipUri, numbered.iceServers]).toEqual([plain.sipUri, plain.iceServers]);
    expect(issueSipCredentials(SETTINGS, 'bob', NOW, { phoneNumber: null }).authorizationUser).toBe(plain.authorizationUser);
    for (const bad of ['442079460123', '+0442079460123', '+44 20', '+44:1']) expect(() => issueSipCredentials(SETTINGS, 'bob', NOW, { phoneNumber: bad })).toThrow(/E\.164/);
  });
});

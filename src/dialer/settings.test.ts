import { describe, expect, it } from 'vitest';
import { loadConfig } from '../common/config.ts';
import { dialerSettingsFrom, sipWsOrigin } from './settings.ts';

const SIP = { CADENZA_SIP_WS_URL: 'wss://sip.example.com:8443', CADENZA_SIP_DOMAIN: 'sip.example.com', CADENZA_SIP_SECRET: 'sixteen-chars-or-more' };

describe('dialer settings from the environment', () => {
  it('is off when nothing is set', () => {
    expect(dialerSettingsFrom(loadConfig({}))).toBeUndefined();
  });

  it('is on with the three SIP settings, TURN optional, a working day by default', () => {
    const s = dialerSettingsFrom(loadConfig({ ...SIP, CADENZA_TURN_URLS: 'turn:t.example.com:3478?transport=udp, stun:t.example.com:3478', CADENZA_TURN_SECRET: 'another-long-secret' }));
    expect(s).toEqual({ wsUrl: SIP.CADENZA_SIP_WS_URL, domain: 'sip.example.com', sipSecret: SIP.CADENZA_SIP_SECRET, turnUrls: ['turn:t.example.com:3478?transport=udp', 'stun:t.example.com:3478'], turnSecret: 'another-long-secret', ttlSeconds: 28_800 });
  });

  it('refuses half a configuration at start, naming what is missing', () => {
    expect(() => dialerSettingsFrom(loadConfig({ CADENZA_SIP_WS_URL: SIP.CADENZA_SIP_WS_URL }))).toThrow(/CADENZA_SIP_DOMAIN and CADENZA_SIP_SECRET/);
    expect(() => dialerSettingsFrom(loadConfig({ ...SIP, CADENZA_TURN_URLS: 'turn:t.example.com' }))).toThrow(/CADENZA_TURN_SECRET/);
    expect(() => loadConfig({ ...SIP, CADENZA_SIP_SECRET: 'short' })).toThrow(/at least 16/);
    expect(() => loadConfig({ ...SIP, CADENZA_SIP_WS_URL: 'https://sip.example.com' })).toThrow(/wss:/);
  });

  it('gives the CSP the WebSocket origin only', () => {
    expect(sipWsOrigin('wss://sip.example.com:8443/ws?x=1')).toBe('wss://sip.example.com:8443');
  });
});

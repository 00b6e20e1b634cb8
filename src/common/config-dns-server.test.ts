import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('CADENZA_DNS_RESOLVER and CADENZA_LIST_HYGIENE', () => {
  it('hygiene is on by default on the system resolvers; a server is an IP address with an optional port', () => {
    expect(loadConfig({}).CADENZA_LIST_HYGIENE).toBe('on');
    expect(loadConfig({}).CADENZA_DNS_RESOLVER).toBeUndefined();
    expect(loadConfig({ CADENZA_DNS_RESOLVER: '127.0.0.1:5353' }).CADENZA_DNS_RESOLVER).toBe('127.0.0.1:5353');
    expect(loadConfig({ CADENZA_DNS_RESOLVER: '[::1]:53', CADENZA_LIST_HYGIENE: 'off' })).toMatchObject({ CADENZA_DNS_RESOLVER: '[::1]:53', CADENZA_LIST_HYGIENE: 'off' });
  });

  it('refuses a host name or a bad port, saying what it takes', () => {
    expect(() => loadConfig({ CADENZA_DNS_RESOLVER: 'dns.example:53' })).toThrow(/CADENZA_DNS_RESOLVER: resolver 'dns.example:53' must be an IP address/);
    expect(() => loadConfig({ CADENZA_DNS_RESOLVER: '127.0.0.1:70000' })).toThrow(/CADENZA_DNS_RESOLVER/);
    expect(() => loadConfig({ CADENZA_LIST_HYGIENE: 'maybe' })).toThrow(/CADENZA_LIST_HYGIENE/);
  });
});

import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('CADENZA_TRUST_PROXY', () => {
  it('is off by default, and takes true, a hop count or proxy addresses', () => {
    expect(loadConfig({}).CADENZA_TRUST_PROXY).toBe(false);
    expect(loadConfig({ CADENZA_TRUST_PROXY: 'true' }).CADENZA_TRUST_PROXY).toBe(true);
    expect(loadConfig({ CADENZA_TRUST_PROXY: '2' }).CADENZA_TRUST_PROXY).toBe(2);
    expect(loadConfig({ CADENZA_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1' }).CADENZA_TRUST_PROXY).toEqual(['10.0.0.0/8', '127.0.0.1', '::1']);
  });

  it('refuses what is none of these, with what it takes', () => {
    expect(() => loadConfig({ CADENZA_TRUST_PROXY: 'yes please' })).toThrow(/CADENZA_TRUST_PROXY: true, false, a number of hops/);
  });
});

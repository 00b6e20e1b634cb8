import { describe, expect, it } from 'vitest';
import { chooseCallback, landingBase } from './callback-host.ts';

/** Where a sign-in may come back to (callback-host.ts), decided from the request's host row alone. */
const on = { publicUrl: 'https://cadenza.example/', appHttpsPort: 443 };
const off = { publicUrl: 'https://cadenza.example', appHttpsPort: undefined };
const host = (state: 'active' | 'renewing' | 'issuing' | 'pending_dns' | 'failed', purpose: 'app' | 'tracking' = 'app', workspaceId = 'w1') => ({ workspaceId, purpose, host: 'app.client.test', state });

describe('chooseCallback', () => {
  it('a Host that is no client app host (none, a tracking host) gets the public URL, whatever it says', () => {
    for (const row of [undefined, host('active', 'tracking')]) {
      expect(chooseCallback(on, row, 'w1')).toEqual({ ok: true, redirectUri: 'https://cadenza.example/oauth/sso/callback', base: 'https://cadenza.example', clientHost: null });
    }
  });

  it("the workspace's own serving app host: its https origin, no port for 443, the listener's port otherwise", () => {
    for (const state of ['active', 'renewing'] as const) expect(chooseCallback(on, host(state), 'w1')).toMatchObject({ ok: true, redirectUri: 'https://app.client.test/oauth/sso/callback', clientHost: 'app.client.test' });
    expect(chooseCallback({ ...on, appHttpsPort: 8443 }, host('active'), 'w1')).toMatchObject({ redirectUri: 'https://app.client.test:8443/oauth/sso/callback' });
  });

  it("refuses another workspace's app host, one not serving yet, and any while custom hosts are off", () => {
    expect(chooseCallback(on, host('active', 'app', 'w2'), 'w1')).toMatchObject({ ok: false, reason: 'other_workspace' });
    for (const state of ['issuing', 'pending_dns', 'failed'] as const) expect(chooseCallback(on, host(state), 'w1')).toMatchObject({ ok: false, reason: 'unverified_host' });
    expect(chooseCallback(off, host('active'), 'w1')).toMatchObject({ ok: false, reason: 'unverified_host', message: expect.stringContaining('does not serve custom hosts') });
  });

  it('lands a browser on its serving client host, else on the public URL', () => {
    expect(landingBase(on, host('active', 'app', 'w2'))).toBe('https://app.client.test');
    expect(landingBase(on, host('pending_dns'))).toBe('https://cadenza.example');
    expect(landingBase(off, host('active'))).toBe('https://cadenza.example');
    expect(landingBase(on, undefined)).toBe('https://cadenza.example');
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DestinationPolicy } from '../../../common/destination-policy.ts';
import { checkIssuer } from './flow.ts';
import { vettedFetch } from './vetted-fetch.ts';

/**
 * The identity provider's address goes through the destination policy: when the issuer is saved
 * (checkIssuer) and on the address each request's socket opens (vettedFetch), so a name that
 * resolves to loopback is refused unless the operator allows private destinations.
 */
const publicOnly: DestinationPolicy = { allow: new Set(), setting: 'CADENZA_WEBHOOK_ALLOW_PRIVATE=true' };
const privateOk: DestinationPolicy = { allow: new Set(['loopback', 'private']), setting: 'CADENZA_WEBHOOK_ALLOW_PRIVATE=true' };

describe('single sign-on destinations', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: req.method, body: req.headers['content-length'] ?? null }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('connects to loopback only where private destinations are allowed, names included', async () => {
    const ok = await vettedFetch(privateOk)(`http://localhost:${port}/x`, { method: 'POST', headers: new Headers({ 'content-type': 'text/plain' }), body: 'abc' });
    expect(await ok.json()).toEqual({ method: 'POST', body: '3' });
    await expect(vettedFetch(publicOnly)(`http://localhost:${port}/x`, {})).rejects.toThrow(/resolves only to loopback addresses: Cadenza does not connect there unless the operator allows it/);
    await expect(vettedFetch(publicOnly)(`http://127.0.0.1:${port}/x`, {})).rejects.toThrow(/127\.0\.0\.1 is a loopback address/);
  });

  it('refuses an issuer that is not https, carries a query, or names a loopback host, in words', async () => {
    await expect(checkIssuer('http://id.example.com', { destinations: publicOnly })).rejects.toThrow('the issuer URL must be https');
    await expect(checkIssuer('https://id.example.com/?tenant=1', { destinations: publicOnly })).rejects.toThrow(/no user name, password, query or fragment/);
    await expect(checkIssuer('https://127.0.0.1:8443', { destinations: publicOnly })).rejects.toThrow(/127\.0\.0\.1 is a loopback address/);
    await expect(checkIssuer('https://localhost', { destinations: publicOnly })).rejects.toThrow(/this machine \(loopback\)/);
    expect((await checkIssuer(`http://127.0.0.1:${port}`, { destinations: privateOk })).port).toBe(String(port));
  });
});

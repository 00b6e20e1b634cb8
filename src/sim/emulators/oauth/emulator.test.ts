import { createPublicKey, createVerify } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimClock } from '../../sim-clock.ts';
import { expectNoLeaks, handleCounts, type HandleCounts } from '../../../../test/leaks.ts';
import { TokenRegistry } from '../tokens.ts';
import { startOAuthEmulator, type OAuthEmulator } from './emulator.ts';
import { s256 } from './grants.ts';

/** The emulator's own answers, checked against what the providers document (no Cadenza code involved). */
const redirect = 'https://app.test/oauth/callback';
const client = { id: 'c1', secret: 's1', redirectUris: [redirect, 'http://127.0.0.1/cb'] };
const verifier = 'v'.repeat(50);

let emu: OAuthEmulator;
let handles: HandleCounts;
let clock: SimClock;
let gmail: TokenRegistry;

beforeEach(() => {
  handles = handleCounts();
  clock = new SimClock(Date.UTC(2026, 10, 29, 12));
  gmail = new TokenRegistry('ya29.test');
});
afterEach(async () => {
  await emu.close();
  await expectNoLeaks(handles);
});

async function authorize(params: Record<string, string>): Promise<Response> {
  const u = new URL(`${emu.origin}/o/oauth2/v2/auth`);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return fetch(u, { redirect: 'manual' });
}

const goodAuth = (over: Record<string, string> = {}) => ({
  client_id: client.id,
  redirect_uri: redirect,
  response_type: 'code',
  scope: 'openid email https://www.googleapis.com/auth/gmail.send',
  state: 'st',
  nonce: 'n1',
  code_challenge: s256(verifier),
  code_challenge_method: 'S256',
  access_type: 'offline',
  ...over,
});

async function codeFor(over: Record<string, string> = {}): Promise<string> {
  const res = await authorize(goodAuth(over));
  expect(res.status).toBe(302);
  const loc = new URL(res.headers.get('location')!);
  expect(loc.searchParams.get('state')).toBe('st');
  return loc.searchParams.get('code')!;
}

async function token(form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${emu.origin}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const redeem = (code: string, over: Record<string, string> = {}) =>
  token({ grant_type: 'authorization_code', code, redirect_uri: redirect, code_verifier: verifier, client_id: client.id, client_secret: client.secret, ...over });

describe('OAuth emulator (Google flavour)', () => {
  beforeEach(async () => {
    emu = await startOAuthEmulator({ flavour: 'google', clock, clients: [client], users: [{ email: 'a@acme.test' }], registries: { gmail } });
  });

  it('issues a signed ID token and a Gmail token that expires with the clock', async () => {
    const r = await redeem(await codeFor());
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 3599, refresh_token: expect.any(String) });
    const [h, p, sig] = String(r.body.id_token).split('.');
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString()) as { kid: string };
    const jwks = (await (await fetch(`${emu.origin}/oauth2/v3/certs`)).json()) as { keys: Array<{ kid: string }> };
    const key = createPublicKey({ key: jwks.keys.find((k) => k.kid === header.kid)!, format: 'jwk' });
    expect(createVerify('RSA-SHA256').update(`${h}.${p}`).verify(key, Buffer.from(sig!, 'base64url'))).toBe(true);
    expect(JSON.parse(Buffer.from(p!, 'base64url').toString())).toMatchObject({ iss: emu.origin, aud: 'c1', email: 'a@acme.test', email_verified: true, nonce: 'n1' });

    const at = String(r.body.access_token);
    expect(gmail.check(`Bearer ${at}`)).toEqual({ ok: true, user: 'a@acme.test' });
    clock.advance(3599_000);
    expect(gmail.check(`Bearer ${at}`)).toEqual({ ok: false, why: 'expired' });
  });

  it('binds a code to its verifier, redirect URI and client, and a second redemption revokes the grant', async () => {
    const code = await codeFor();
    expect(await redeem(code, { code_verifier: 'w'.repeat(50) })).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: 'Invalid code verifier.' } });
    expect(await redeem(code, { redirect_uri: 'https://evil.test/cb' })).toMatchObject({ status: 400, body: { error: 'redirect_uri_mismatch' } });
    expect(await redeem(code, { client_secret: 'nope' })).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    const first = await redeem(code);
    expect(first.status).toBe(200);
    expect(await redeem(code)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(gmail.check(`Bearer ${String(first.body.access_token)}`)).toEqual({ ok: false, why: 'expired' });
    expect(await token({ grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token), client_id: 'c1', client_secret: 's1' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' },
    });
  });

  it('refuses bad authorization requests the documented way', async () => {
    const unknownRedirect = await authorize(goodAuth({ redirect_uri: 'https://evil.test/cb' }));
    expect(unknownRedirect.status).toBe(400); // shown to the user, never redirected
    const loopback = await authorize(goodAuth({ redirect_uri: 'http://127.0.0.1:53117/cb' }));
    expect(loopback.status).toBe(302); // any loopback port (RFC 8252 §7.3)
    const noPkce = await authorize(goodAuth({ code_challenge_method: 'plain' }));
    expect(new URL(noPkce.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    const scope = await authorize(goodAuth({ scope: 'openid https://www.googleapis.com/auth/drive' }));
    expect(new URL(scope.headers.get('location')!).searchParams.get('error')).toBe('invalid_scope');
    // Without access_type=offline Google gives no refresh token.
    const online = await redeem(await codeFor({ access_type: 'online' }));
    expect(online.body.refresh_token).toBeUndefined();
  });

  it('revocation kills the refresh token and the live access tokens', async () => {
    const r = await redeem(await codeFor());
    const res = await fetch(`${emu.origin}/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: String(r.body.refresh_token) }) });
    expect(res.status).toBe(200);
    expect(gmail.check(`Bearer ${String(r.body.access_token)}`)).toEqual({ ok: false, why: 'expired' });
    expect(emu.introspect(String(r.body.access_token))).toBeUndefined();
  });
});

describe('OAuth emulator (Microsoft flavour)', () => {
  beforeEach(async () => {
    emu = await startOAuthEmulator({ flavour: 'microsoft', clock, clients: [client], users: [{ email: 'a@contoso.test' }], tenantId: 'tid-1' });
  });

  it('rotates refresh tokens, keeps the old one valid, and refuses mixing Graph with outlook.office.com scopes', async () => {
    const discovery = (await (await fetch(`${emu.origin}/common/v2.0/.well-known/openid-configuration`)).json()) as { issuer: string; token_endpoint: string };
    expect(discovery.issuer).toBe(`${emu.origin}/{tenantid}/v2.0`);
    const u = new URL(`${emu.origin}/common/oauth2/v2.0/authorize`);
    for (const [k, v] of Object.entries(goodAuth({ scope: 'openid offline_access https://graph.microsoft.com/Mail.Send https://outlook.office.com/SMTP.Send' }))) u.searchParams.set(k, v);
    const mixed = await fetch(u, { redirect: 'manual' });
    expect(new URL(mixed.headers.get('location')!).searchParams.get('error_description')).toMatch(/^AADSTS28000/);

    u.searchParams.set('scope', 'openid offline_access https://graph.microsoft.com/Mail.Send');
    const code = new URL((await fetch(u, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
    const post = (form: Record<string, string>) =>
      fetch(discovery.token_endpoint, { method: 'POST', body: new URLSearchParams({ client_id: 'c1', client_secret: 's1', ...form }) }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    const first = await post({ grant_type: 'authorization_code', code, redirect_uri: redirect, code_verifier: verifier });
    const rt1 = String(first.body.refresh_token);
    const second = await post({ grant_type: 'refresh_token', refresh_token: rt1, scope: 'https://graph.microsoft.com/Mail.Send' });
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(rt1);
    expect((await post({ grant_type: 'refresh_token', refresh_token: rt1 })).status).toBe(200);
    const wider = await post({ grant_type: 'refresh_token', refresh_token: rt1, scope: 'https://graph.microsoft.com/Mail.ReadWrite' });
    expect(wider).toMatchObject({ status: 400, body: { error: 'invalid_scope', error_codes: [65001] } });
    emu.revokeUser('a@contoso.test');
    const dead = await post({ grant_type: 'refresh_token', refresh_token: String(second.body.refresh_token) });
    expect(dead).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_codes: [70000] } });
  });
});

describe('a generic OpenID Connect provider (flavour oidc)', () => {
  const decode = (jwt: string) => jwt.split('.').map((p, i) => (i < 2 ? (JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>) : p));
  async function idToken(email: string): Promise<string> {
    const u = new URL(`${emu.origin}/authorize`);
    for (const [k, v] of Object.entries({ ...goodAuth({ scope: 'openid email profile' }), login_hint: email })) u.searchParams.set(k, v);
    const res = await fetch(u, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
    const t = await token({ grant_type: 'authorization_code', code, redirect_uri: redirect, code_verifier: verifier, client_id: client.id, client_secret: client.secret });
    expect(t.status).toBe(200);
    return t.body.id_token as string;
  }

  it('publishes its discovery document and signs ID tokens with email, email_verified, name and groups; spoils one on request', async () => {
    emu = await startOAuthEmulator({
      flavour: 'oidc',
      clock,
      clients: [client],
      users: [
        { email: 'ada@acme.test', groups: ['sales'], name: 'Ada' },
        { email: 'eve@acme.test', emailVerified: false },
      ],
    });
    const meta = (await (await fetch(`${emu.origin}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({ issuer: emu.origin, authorization_endpoint: `${emu.origin}/authorize`, jwks_uri: `${emu.origin}/jwks`, id_token_signing_alg_values_supported: ['RS256'] });
    expect(meta.claims_supported).toEqual(expect.arrayContaining(['email', 'email_verified', 'groups']));
    const jwks = (await (await fetch(`${emu.origin}/jwks`)).json()) as { keys: Array<Record<string, unknown>> };
    const verify = (jwt: string) => {
      const [h, p, sig] = jwt.split('.');
      const key = createPublicKey({ key: jwks.keys[0]! as never, format: 'jwk' });
      return createVerify('RSA-SHA256').update(`${h}.${p}`).verify(key, Buffer.from(sig!, 'base64url'));
    };
    const ada = await idToken('ada@acme.test');
    expect(verify(ada)).toBe(true);
    expect(decode(ada)[1]).toMatchObject({ iss: emu.origin, aud: client.id, nonce: 'n1', email: 'ada@acme.test', email_verified: true, name: 'Ada', groups: ['sales'] });
    expect(decode(await idToken('eve@acme.test'))[1]).toMatchObject({ email: 'eve@acme.test', email_verified: false });
    emu.spoilNextIdToken('signature');
    const forged = await idToken('ada@acme.test');
    expect(decode(forged)[0]).toMatchObject({ kid: jwks.keys[0]!.kid });
    expect(verify(forged)).toBe(false);
    emu.spoilNextIdToken('nonce');
    expect(decode(await idToken('ada@acme.test'))[1]).toMatchObject({ nonce: 'n1-other' });
    // One spoil spoils one token.
    expect(verify(await idToken('ada@acme.test'))).toBe(true);
  });
});

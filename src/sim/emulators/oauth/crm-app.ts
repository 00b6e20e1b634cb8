import type { Clock } from '../../../common/clock.ts';
import type { EmulatorReply } from '../server.ts';
import type { TokenRegistry } from '../tokens.ts';
import { GrantStore, type Audience, type Client, type User } from './grants.ts';

/**
 * The authorization-code app of a CRM emulator (HubSpot's, Pipedrive's): what both CRMs' OAuth
 * documentation has in common, on GrantStore's codes and grants, with each CRM's own request
 * shapes and error bodies left to its route file (hubspot/routes/oauth.ts, pipedrive/routes/oauth.ts):
 *
 *   authorize   the user consents at once (a test's browser, headless Chromium included, is sent
 *               straight back), or declines once after denyNext(); an unknown client or a redirect
 *               URI the app does not list is an error page, never a redirect (RFC 6749 §4.1.2.1)
 *   code        single use, 10 minutes, bound to the client and the redirect URI
 *   tokens      access tokens come from the API emulator's TokenRegistry, so its API accepts them,
 *               and refuses them from the instant they expire (the clock) or the grant is revoked
 *   rotation    a CRM that rotates (Pipedrive) kills the old refresh token when it issues a new one
 */
export interface CrmOAuthAppOptions {
  audience: Extract<Audience, 'hubspot' | 'pipedrive'>;
  registry: TokenRegistry;
  clients: Client[];
  clock: Clock;
  /** Access-token lifetime in seconds (HubSpot 1800, Pipedrive 3599). */
  ttlS: number;
  rotates: boolean;
  /** Who consents: the token's user in the API emulator. */
  user(): User;
}

export type Issued = { accessToken: string; refreshToken: string; expiresIn: number; scopes: string[] };

export type AuthorizeOutcome = { kind: 'redirect'; location: string } | { kind: 'page'; status: number; text: string };

export class CrmOAuthApp {
  readonly grants: GrantStore;
  private readonly denials: string[] = [];
  /** Token requests by grant type, refused ones included. */
  readonly tokenRequests: string[] = [];

  constructor(private readonly o: CrmOAuthAppOptions) {
    this.grants = new GrantStore(o.clock, { [o.audience]: o.registry });
  }

  client(id: string | null | undefined): Client | undefined {
    return this.o.clients.find((c) => c.id === id);
  }

  /** The next consent is declined with this error (default access_denied). */
  denyNext(error = 'access_denied'): void {
    this.denials.push(error);
  }

  /** The consent page: `scopeProblem` is the CRM's own check of the scopes asked (null: fine). */
  authorize(q: Record<string, string | undefined>, scopes: string[], scopeProblem: string | null): AuthorizeOutcome {
    const c = this.client(q.client_id);
    if (!c) return { kind: 'page', status: 400, text: 'The app (client_id) was not found.' };
    if (!q.redirect_uri || !c.redirectUris.includes(q.redirect_uri)) return { kind: 'page', status: 400, text: 'The redirect_uri does not match the app’s redirect URLs.' };
    if (scopeProblem) return { kind: 'page', status: 400, text: scopeProblem };
    const back = (params: Record<string, string>) => {
      const u = new URL(q.redirect_uri!);
      for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
      if (q.state !== undefined) u.searchParams.set('state', q.state);
      return { kind: 'redirect' as const, location: u.href };
    };
    const denied = this.denials.shift();
    if (denied) return back({ error: denied, error_description: 'The user declined.' });
    const code = this.grants.newCode({ clientId: c.id, redirectUri: q.redirect_uri, challenge: undefined, scopes, nonce: undefined, accessType: undefined, user: this.o.user() });
    return back({ code: code.code });
  }

  /** authorize() as the emulator server answers it. */
  authorizeReply(q: Record<string, string | undefined>, scopes: string[], scopeProblem: string | null): EmulatorReply {
    const out = this.authorize(q, scopes, scopeProblem);
    if (out.kind === 'redirect') return { status: 302, headers: { location: out.location } };
    return { status: out.status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: out.text };
  }

  /** Redeems a code; a code redeemed twice revokes what it gave (RFC 6749 §4.1.2). */
  exchange(c: Client, code: string, redirectUri: string | null): Issued | 'bad_code' | 'bad_redirect' {
    const found = this.grants.codes.get(code);
    if (!found || found.clientId !== c.id || this.o.clock.now() >= found.expiresAt) return 'bad_code';
    if (found.used) {
      const g = found.grantId ? this.grants.grants.get(found.grantId) : undefined;
      if (g) this.grants.revokeGrant(g);
      return 'bad_code';
    }
    if (redirectUri !== found.redirectUri) return 'bad_redirect';
    found.used = true;
    const g = this.grants.newGrant(c.id, found.user, found.scopes);
    found.grantId = g.id;
    return this.issue(g, this.grants.newRefreshToken(g));
  }

  refresh(c: Client, refreshToken: string): Issued | 'bad_refresh' {
    const g = this.grants.grantOfRefreshToken(refreshToken);
    if (!g || g.clientId !== c.id) return 'bad_refresh';
    if (!this.o.rotates) return this.issue(g, refreshToken);
    g.refreshTokens.delete(refreshToken);
    return this.issue(g, this.grants.newRefreshToken(g));
  }

  private issue(g: { id: string }, refreshToken: string): Issued {
    const grant = this.grants.grants.get(g.id)!;
    const at = this.grants.newAccessToken(grant, grant.scopes, [this.o.audience], this.o.ttlS);
    return { accessToken: at.token, refreshToken, expiresIn: this.o.ttlS, scopes: grant.scopes };
  }

  /** The user uninstalls the app (or an admin removes it): every grant dies, its tokens at once. */
  revokeAll(): void {
    for (const g of this.grants.grants.values()) this.grants.revokeGrant(g);
  }

  close(): void {
    this.grants.close();
  }
}

/** A form-encoded body as the emulator server keeps it (bytes); anything else is null: the token endpoints take only forms. */
export function formBody(req: { headers: Record<string, unknown>; body: unknown }): URLSearchParams | null {
  const type = String(req.headers['content-type'] ?? '');
  if (!type.startsWith('application/x-www-form-urlencoded') || !Buffer.isBuffer(req.body)) return null;
  return new URLSearchParams(req.body.toString('utf8'));
}

import { createHash, randomBytes } from 'node:crypto';
import type { Clock, TimerHandle } from '../../../common/clock.ts';
import type { TokenRegistry } from '../tokens.ts';

/**
 * The authorization server's memory: authorization codes, grants (one per consent, holding its
 * refresh tokens) and access tokens, with the rules both providers document:
 *
 * - a code is single use, lives 10 minutes, is bound to the client, the redirect URI and the PKCE
 *   S256 challenge; redeeming one twice revokes what it issued (RFC 6749 §4.1.2);
 * - an access token expires (expires_in); the provider APIs (Gmail, Graph emulators) stop
 *   accepting it at that instant, through their TokenRegistry;
 * - revoking a grant kills its refresh tokens and access tokens at once;
 * - a rotated refresh token leaves the old one valid (Microsoft documents this; Google rarely
 *   rotates), unless the test asks otherwise.
 */

/** Who accepts a token: the mail APIs, the IMAP/SMTP servers of each provider, and the CRM APIs (crm-app.ts). */
export type Audience = 'gmail' | 'graph' | 'google-imap' | 'outlook-imap' | 'hubspot' | 'pipedrive';

export interface Client {
  id: string;
  secret: string;
  /** Exact redirect URIs; a loopback one without a port (http://127.0.0.1/cb) matches any port (RFC 8252 §7.3). */
  redirectUris: string[];
}

export interface User {
  email: string;
  sub: string;
  /** Microsoft: the user's tenant id. */
  tid?: string;
  /** Generic OpenID provider: whether the provider vouches for the address (default true). */
  emailVerified?: boolean;
  /** Generic OpenID provider: the `groups` claim (absent when not set). */
  groups?: string[];
  name?: string;
}

export interface Code {
  code: string;
  clientId: string;
  redirectUri: string;
  /** PKCE S256; undefined where the provider documents none (HubSpot, Pipedrive). */
  challenge: string | undefined;
  scopes: string[];
  nonce: string | undefined;
  /** Google: access_type=offline asks for a refresh token. */
  accessType: string | undefined;
  user: User;
  expiresAt: number;
  used: boolean;
  /** The grant its first redemption created (revoked if the code is redeemed again). */
  grantId?: string;
}

export interface Grant {
  id: string;
  clientId: string;
  user: User;
  scopes: string[];
  refreshTokens: Set<string>;
  accessTokens: Set<string>;
  revoked: boolean;
}

export interface AccessToken {
  token: string;
  grantId: string;
  user: User;
  scopes: string[];
  audiences: Audience[];
  expiresAt: number;
  revoked: boolean;
}

export class GrantStore {
  readonly codes = new Map<string, Code>();
  readonly grants = new Map<string, Grant>();
  readonly accessTokens = new Map<string, AccessToken>();
  private readonly refreshIndex = new Map<string, string>();
  private readonly timers = new Set<TimerHandle>();

  constructor(
    private readonly clock: Clock,
    private readonly registries: Partial<Record<Audience, TokenRegistry>>,
  ) {}

  newCode(c: Omit<Code, 'code' | 'expiresAt' | 'used'>): Code {
    const code: Code = { ...c, code: `emu-code-${random()}`, expiresAt: this.clock.now() + 10 * 60_000, used: false };
    this.codes.set(code.code, code);
    return code;
  }

  newGrant(clientId: string, user: User, scopes: string[]): Grant {
    const g: Grant = { id: random(), clientId, user, scopes, refreshTokens: new Set(), accessTokens: new Set(), revoked: false };
    this.grants.set(g.id, g);
    return g;
  }

  newRefreshToken(g: Grant): string {
    const rt = `emu-rt-${random()}`;
    g.refreshTokens.add(rt);
    this.refreshIndex.set(rt, g.id);
    return rt;
  }

  /** The live grant a refresh token belongs to, or undefined (unknown, rotated away, revoked). */
  grantOfRefreshToken(rt: string): Grant | undefined {
    const id = this.refreshIndex.get(rt);
    const g = id ? this.grants.get(id) : undefined;
    return g && !g.revoked && g.refreshTokens.has(rt) ? g : undefined;
  }

  /**
   * An access token for the grant, valid for `ttlS` seconds. Tokens for a mail API come from that
   * API emulator's registry, so it accepts them; each expires there when its time comes.
   */
  newAccessToken(g: Grant, scopes: string[], audiences: Audience[], ttlS: number): AccessToken {
    const apiAudience = audiences.find((a) => this.registries[a]);
    const registry = apiAudience ? this.registries[apiAudience] : undefined;
    const token = registry ? registry.issue(g.user.email, scopes) : `emu-at-${random()}`;
    const at: AccessToken = { token, grantId: g.id, user: g.user, scopes, audiences, expiresAt: this.clock.now() + ttlS * 1000, revoked: false };
    this.accessTokens.set(token, at);
    g.accessTokens.add(token);
    if (registry) {
      const t = this.clock.setTimer(ttlS * 1000, () => {
        this.timers.delete(t);
        registry.expire(token);
      });
      this.timers.add(t);
    }
    return at;
  }

  /** An access token that is live now for `audience` (what an IMAP/SMTP server would check). */
  introspect(token: string, audience?: Audience): AccessToken | undefined {
    const at = this.accessTokens.get(token);
    if (!at || at.revoked || this.clock.now() >= at.expiresAt) return undefined;
    if (audience && !at.audiences.includes(audience)) return undefined;
    return at;
  }

  revokeGrant(g: Grant): void {
    g.revoked = true;
    for (const t of g.accessTokens) {
      const at = this.accessTokens.get(t);
      if (!at || at.revoked) continue;
      at.revoked = true;
      for (const a of at.audiences) {
        const r = this.registries[a];
        if (r && this.clock.now() < at.expiresAt) r.expire(t);
      }
    }
  }

  close(): void {
    for (const t of this.timers) t.cancel();
    this.timers.clear();
  }
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function random(): string {
  return randomBytes(18).toString('base64url');
}

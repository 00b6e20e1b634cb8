import { createHash } from 'node:crypto';

/**
 * The connected app's grants and the sessions (access tokens) they issue (Salesforce Help, "OAuth
 * 2.0 Refresh Token Flow", "Revoke OAuth Tokens"). A grant is what an admin's authorization left:
 * a refresh token for one user. A refresh gives a new access token; the refresh token itself does
 * not rotate (the connected app's default). A session ends when its time is up (Salesforce's session
 * timeout: 2 hours by default, counted from the last activity, here from issue: the stricter
 * reading), or when the session or its grant is revoked. Revoking a refresh token revokes the grant
 * and every session it issued (documented).
 */
interface Grant {
  refreshToken: string;
  userId: string;
  clientId: string;
  revoked: boolean;
}

interface Session {
  grant: Grant;
  expiresAt: number;
  revoked: boolean;
}

export type SessionCheck = { ok: true; userId: string } | { ok: false };

export class Sessions {
  private readonly grants = new Map<string, Grant>();
  private readonly sessions = new Map<string, Session>();
  private n = 0;

  constructor(
    private readonly orgId: string,
    private readonly ttlMs: number,
  ) {}

  /** What an admin's consent leaves: a refresh token for `userId` (documented form: `5Aep861…`). */
  grant(clientId: string, userId: string): string {
    const refreshToken = `5Aep861${digest(`refresh.${++this.n}`).slice(0, 80)}`;
    this.grants.set(refreshToken, { refreshToken, userId, clientId, revoked: false });
    return refreshToken;
  }

  /** A new access token for the grant of `refreshToken`, or null when the grant is unknown or revoked. */
  refresh(clientId: string, refreshToken: string, now: number): { accessToken: string; userId: string } | null {
    const g = this.grants.get(refreshToken);
    if (!g || g.revoked || g.clientId !== clientId) return null;
    // Access tokens are the org id, '!', and an opaque part (documented form: 00D…!AQ…).
    const accessToken = `${this.orgId}!AQ${digest(`session.${++this.n}`).slice(0, 96)}`;
    this.sessions.set(accessToken, { grant: g, expiresAt: now + this.ttlMs, revoked: false });
    return { accessToken, userId: g.userId };
  }

  check(authorization: string | undefined, now: number): SessionCheck {
    const m = /^(?:Bearer|OAuth)\s+(\S+)\s*$/i.exec(authorization ?? '');
    const s = m ? this.sessions.get(m[1]!) : undefined;
    if (!s || s.revoked || s.grant.revoked || now >= s.expiresAt) return { ok: false };
    return { ok: true, userId: s.grant.userId };
  }

  /** /services/oauth2/revoke: a refresh token revokes its grant and its sessions; an access token, itself. */
  revoke(token: string): boolean {
    const g = this.grants.get(token);
    if (g) {
      g.revoked = true;
      return true;
    }
    const s = this.sessions.get(token);
    if (s) {
      s.revoked = true;
      return true;
    }
    return false;
  }

  /** Ends every session now (a timeout, an admin's "expire all passwords"): the next call gets 401. */
  expireAll(): void {
    for (const s of this.sessions.values()) s.revoked = true;
  }
}

function digest(s: string): string {
  return createHash('sha256').update(s).digest('base64url').replace(/[-_]/g, 'x').repeat(2);
}

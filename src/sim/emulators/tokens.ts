/**
 * Access tokens an emulator accepts. A test issues a token for a mailbox (and can expire it to get
 * the provider's 401), or the OAuth emulator issues one for a grant (oauth/grants.ts), with the
 * grant's scopes: a route that needs a scope the token lacks answers the provider's 403 (Gmail
 * insufficientPermissions, Graph ErrorAccessDenied). A token issued without scopes may do anything.
 */
export type TokenCheck = { ok: true; user: string } | { ok: false; why: 'missing' | 'unknown' | 'expired' };

export class TokenRegistry {
  private tokens = new Map<string, { user: string; expired: boolean; scopes: readonly string[] | null }>();
  private n = 0;

  constructor(private readonly prefix: string) {}

  issue(user: string, scopes: readonly string[] | null = null): string {
    const token = `${this.prefix}.${++this.n}.${user.toLowerCase()}`;
    this.tokens.set(token, { user: user.toLowerCase(), expired: false, scopes });
    return token;
  }

  expire(token: string): void {
    const t = this.tokens.get(token);
    if (!t) throw new Error('expire: unknown token');
    t.expired = true;
  }

  /** Expires every token of the user (a password change, a revoked grant). */
  expireAll(user: string): void {
    for (const t of this.tokens.values()) if (t.user === user.toLowerCase()) t.expired = true;
  }

  /** Reads an Authorization header ('Bearer <token>'). */
  check(authorization: string | undefined): TokenCheck {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m) return { ok: false, why: 'missing' };
    const t = this.tokens.get(m[1]!);
    if (!t) return { ok: false, why: 'unknown' };
    if (t.expired) return { ok: false, why: 'expired' };
    return { ok: true, user: t.user };
  }

  /** Whether the token in an Authorization header that check() accepted may call a route that needs one of `anyOf` (scopeAllows). */
  allows(authorization: string | undefined, anyOf: readonly string[]): boolean {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    return scopeAllows(m ? (this.tokens.get(m[1]!)?.scopes ?? null) : null, anyOf);
  }
}

/**
 * Whether a token with `scopes` may call a route that needs one of `anyOf`. A scope may be named
 * in full ('https://graph.microsoft.com/Mail.ReadWrite') or by its last part, as Microsoft's
 * tokens list them ('Mail.ReadWrite'). A token issued without scopes may do anything.
 */
export function scopeAllows(scopes: readonly string[] | null, anyOf: readonly string[]): boolean {
  if (scopes === null) return true;
  const short = (s: string) => s.slice(s.lastIndexOf('/') + 1);
  return scopes.some((s) => anyOf.some((a) => s === a || short(s) === short(a)));
}

/**
 * What a connector's token cache does, for tests: hands out the current token, and a new one when
 * asked to refresh (or a scripted failure). `calls` records each request for assertions.
 */
export interface TestTokenSource {
  (opts: { forceRefresh: boolean }): Promise<string>;
  calls: Array<{ forceRefresh: boolean }>;
  /** The token it will hand out next without refreshing. */
  current: string;
}

export function testTokenSource(
  registry: TokenRegistry,
  user: string,
  opts: { onRefresh?: 'issue' | 'same' | Error } = {},
): TestTokenSource {
  const fn = (async (o: { forceRefresh: boolean }) => {
    fn.calls.push({ forceRefresh: o.forceRefresh });
    if (o.forceRefresh) {
      const r = opts.onRefresh ?? 'issue';
      if (r instanceof Error) throw r;
      if (r === 'issue') fn.current = registry.issue(user);
    }
    return fn.current;
  }) as TestTokenSource;
  fn.calls = [];
  fn.current = registry.issue(user);
  return fn;
}

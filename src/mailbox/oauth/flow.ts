import * as oauth from 'oauth4webapi';
import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import { newId } from '../../common/ids.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import { resumeMailbox } from '../health/pause.ts';
import type { Store } from '../../store/store.ts';
import { parseMailboxSettings } from '../settings.ts';
import type { Vault } from '../vault.ts';
import type { OAuthClients } from './client.ts';
import { consumeFlow, purgeFlows, saveFlow, type FlowRow } from './flow-store.ts';
import type { MailboxTokens } from './mailbox-tokens.ts';
import { isOAuthMode, isOAuthProviderName, type OAuthMode, type OAuthProviderName } from './providers.ts';
import { classifyTokenFailure } from './token-errors.ts';

/**
 * Connecting a mailbox with OAuth 2 authorization code + PKCE (RFC 6749, RFC 7636, OpenID Connect):
 *
 *   start     a random state, nonce and S256 code verifier, kept server-side in oauth_flow (10
 *             minutes, single use); the user is sent to the provider's consent page.
 *   complete  the provider redirects back with code + state: the flow is consumed (a replayed or
 *             expired state is refused), the code is exchanged with the verifier, the ID token is
 *             validated (issuer, audience, nonce, expiry) and names the account; the mailbox is
 *             created, or updated and resumed when it already exists, and the grant is sealed in
 *             the vault in the same transaction.
 *
 * Who the user is, and whether they may add a mailbox to the workspace, is the caller's business
 * (routes.ts checks the signed-in session; the CLI is the operator): this file trusts the workspace
 * and the user it is given at start, and refuses a callback in another session than the start's.
 */

export interface OAuthFlowDeps {
  store: Store;
  vault: Vault;
  clients: OAuthClients;
  clock: Clock;
  random: Random;
  /** Told about a reconnect, so that a cached dead grant is forgotten at once. */
  tokens?: MailboxTokens;
  log?: Logger;
  /** How long a started flow may wait for its callback (default 10 minutes). */
  flowTtlMs?: number;
  /** A mailbox was connected, or reconnected: the sender and sync pools take it now (a 'mailboxes' work nudge). */
  mailboxChanged?: () => void;
}

export interface StartRequest {
  workspaceId: string;
  provider: OAuthProviderName;
  mode: OAuthMode;
  /** Where the provider sends the user back: the server's /oauth/callback or the CLI's loopback listener. */
  redirectUri: string;
  /** The address the user means to connect: preselects the account on the consent page. */
  loginHint?: string;
  /** The person connecting (app_user id): they own the new mailbox. */
  userId?: string;
  /** The web session that started the flow (auth_session.id_hash): only it may complete the flow. */
  sessionHash?: string;
}

export interface CompleteOptions {
  /** The callback's web session (auth_session.id_hash); a flow bound to another one is refused. */
  sessionHash?: string;
}

export interface Started {
  url: URL;
  state: string;
  expiresAt: number;
}

export interface Connected {
  mailboxId: string;
  email: string;
  workspaceId: string;
  /** Who owns the mailbox when it was created by this flow (null: started from the CLI). */
  userId: string | null;
  provider: 'gmail' | 'graph' | 'smtp_imap';
  oauthProvider: OAuthProviderName;
  mode: OAuthMode;
  /** False when an existing mailbox was reconnected. */
  created: boolean;
}

export async function startAuthorization(deps: OAuthFlowDeps, req: StartRequest): Promise<Started> {
  const client = await deps.clients.get(req.provider);
  if (!client.as.authorization_endpoint) throw cadenzaError('CONFIG_INVALID', `${client.profile.label}: no authorization endpoint in the metadata`);
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const verifier = oauth.generateRandomCodeVerifier();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const now = deps.clock.now();
  const expiresAt = now + (deps.flowTtlMs ?? 10 * 60_000);
  await purgeFlows(deps.store.db, now);
  await saveFlow(deps.store.db, {
    state,
    workspace_id: req.workspaceId,
    provider: req.provider,
    mode: req.mode,
    redirect_uri: req.redirectUri,
    code_verifier: verifier,
    nonce,
    login_hint: req.loginHint ?? null,
    user_id: req.userId ?? null,
    session_hash: req.sessionHash ?? null,
    created_at: new Date(now),
    expires_at: new Date(expiresAt),
  });
  const url = new URL(client.as.authorization_endpoint);
  const p = url.searchParams;
  p.set('client_id', client.client.client_id);
  p.set('redirect_uri', req.redirectUri);
  p.set('response_type', 'code');
  p.set('scope', client.profile.scopes(req.mode).join(' '));
  p.set('state', state);
  p.set('nonce', nonce);
  p.set('code_challenge', challenge);
  p.set('code_challenge_method', 'S256');
  if (req.loginHint) p.set('login_hint', req.loginHint);
  for (const [k, v] of Object.entries(client.profile.authorizationParams(req.mode))) p.set(k, v);
  return { url, state, expiresAt };
}

/** Completes a flow from the callback's query (code, state; or error, state). */
export async function completeAuthorization(deps: OAuthFlowDeps, callback: URLSearchParams, opts: CompleteOptions = {}): Promise<Connected> {
  const state = callback.get('state');
  if (!state) throw cadenzaError('INVALID_INPUT', 'the callback has no state parameter', { field: 'state' });
  const consumed = await consumeFlow(deps.store.db, state, deps.clock.now(), opts.sessionHash, MAILBOX_PROVIDERS);
  if (!consumed.ok) {
    if (consumed.reason === 'other_session') {
      throw cadenzaError('FORBIDDEN', 'this sign-in was started by someone else, or in another browser session; start the connection again from your Mailboxes screen', { field: 'state', reason: consumed.reason });
    }
    const why = {
      unknown: 'this sign-in is unknown to Cadenza; start the connection again',
      used: 'this sign-in was already completed (a link can be used once); start the connection again',
      expired: 'this sign-in took too long and expired; start the connection again',
    }[consumed.reason];
    throw cadenzaError('INVALID_INPUT', why, { field: 'state', reason: consumed.reason });
  }
  const flow = mailboxFlow(consumed.flow);
  const client = await deps.clients.get(flow.provider);
  const label = client.profile.label;

  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(client.as, client.client, callback, state);
  } catch (e) {
    if (e instanceof oauth.AuthorizationResponseError) {
      // access_denied: the user declined on the consent page (or an admin policy did).
      throw cadenzaError('MAILBOX_AUTH_FAILED', `${label} did not grant access (${e.error}${e.error_description ? `: ${e.error_description}` : ''})`, { oauthError: e.error });
    }
    throw cadenzaError('INVALID_INPUT', `invalid ${label} callback: ${(e as Error).message}`);
  }

  let tokens: oauth.TokenEndpointResponse;
  const ro = client.requestOptions();
  try {
    const res = await oauth.authorizationCodeGrantRequest(client.as, client.client, client.auth, params, flow.redirect_uri, flow.code_verifier, ro);
    tokens = await oauth.processAuthorizationCodeResponse(client.as, client.client, res, { expectedNonce: flow.nonce, requireIdToken: true });
  } catch (e) {
    const f = classifyTokenFailure(e);
    if (f.kind === 'transient') {
      throw Object.assign(cadenzaError('MAILBOX_UNAVAILABLE', `${label} token endpoint unavailable (${f.error}); start the connection again`, { transient: true }), { transient: true });
    }
    if (e instanceof oauth.ResponseBodyError) {
      throw cadenzaError('MAILBOX_AUTH_FAILED', `${label} refused the authorization code (${e.error})`, { oauthError: e.error });
    }
    // An ID token that fails validation (issuer, audience, nonce, expiry) lands here.
    throw cadenzaError('MAILBOX_AUTH_FAILED', `${label} answer failed validation: ${(e as Error).message}`);
  } finally {
    ro.cancel();
  }

  const claims = oauth.getValidatedIdTokenClaims(tokens);
  const email = accountEmail(flow.provider, claims);
  if (!email) throw cadenzaError('MAILBOX_AUTH_FAILED', `${label} did not say which address was connected (no verified email in the ID token)`);
  if (!tokens.refresh_token) {
    throw cadenzaError('MAILBOX_AUTH_FAILED', `${label} returned no refresh token, so Cadenza could not keep access; remove Cadenza from the account's connected apps and connect again`);
  }
  const missing = missingScopes(client.profile.scopes(flow.mode), tokens.scope);
  if (missing.length) {
    // Google's consent screen lets the user untick scopes; a mailbox that cannot send or read
    // would only fail later, less clearly.
    throw cadenzaError('MAILBOX_AUTH_FAILED', `${label} granted less than Cadenza needs (missing ${missing.join(', ')}); connect again and allow every permission asked`, { missing });
  }
  const now = deps.clock.now();
  const kind = client.profile.mailbox(flow.mode);
  const credential = {
    kind: 'oauth' as const,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token,
    expiresAt: now + (tokens.expires_in ?? 3600) * 1000,
    ...(tokens.scope ? { scope: tokens.scope } : {}),
  };

  const result = await deps.store.db.transaction().execute(async (tx) => {
    const existing = await tx
      .selectFrom('mailbox')
      .select(['id', 'settings', 'health', 'health_reason', 'user_id'])
      .where('workspace_id', '=', flow.workspace_id)
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email))
      .where('removed_at', 'is', null)
      .forUpdate()
      .executeTakeFirst();
    if (existing) {
      // A reconnect (or a change of mode): the provider's servers replace the old ones; the user's
      // own choices (folders, Sent handling) stay.
      const old = parseMailboxSettings(existing.settings);
      const settings = { ...old, ...kind.settings };
      if (!kind.settings.smtp) delete settings.smtp;
      if (!kind.settings.imap) delete settings.imap;
      // The owner stays who they were; a mailbox nobody owned becomes the connecting person's.
      await tx
        .updateTable('mailbox')
        .set({ provider: kind.provider, settings: JSON.stringify(settings), user_id: existing.user_id ?? flow.user_id })
        .where('id', '=', existing.id)
        .execute();
      await deps.vault.put(flow.workspace_id, existing.id, credential, tx);
      // A new grant lifts a pause about credentials, not one about bounces or spam complaints.
      if (existing.health !== 'ok' && isCredentialPause(existing.health_reason)) await resumeMailbox(tx, existing.id);
      return { mailboxId: existing.id, created: false };
    }
    const id = newId(now, deps.random);
    await tx
      .insertInto('mailbox')
      .values({ id, workspace_id: flow.workspace_id, user_id: flow.user_id, email, provider: kind.provider, settings: JSON.stringify(kind.settings) })
      .execute();
    await deps.vault.put(flow.workspace_id, id, credential, tx);
    return { mailboxId: id, created: true };
  });
  deps.tokens?.forget(result.mailboxId);
  deps.mailboxChanged?.();
  deps.log?.info({ mailboxId: result.mailboxId, provider: flow.provider, mode: flow.mode, created: result.created }, 'mailbox connected with OAuth');
  return { ...result, email, workspaceId: flow.workspace_id, userId: flow.user_id, provider: kind.provider, oauthProvider: flow.provider, mode: flow.mode };
}

const MAILBOX_PROVIDERS = ['google', 'microsoft'] as const;

/** A flow consumed with MAILBOX_PROVIDERS, as the mailbox flow's types say it is (a mailbox flow always has its nonce and mode). */
function mailboxFlow(f: FlowRow): FlowRow & { provider: OAuthProviderName; mode: OAuthMode; nonce: string } {
  if (!isOAuthProviderName(f.provider) || !isOAuthMode(f.mode) || f.nonce === null) throw new Error(`oauth_flow ${f.provider}/${f.mode} is not a mailbox flow`);
  return f as FlowRow & { provider: OAuthProviderName; mode: OAuthMode; nonce: string };
}

/**
 * The mail scopes asked for that the token answer's `scope` does not list (the identity scopes are
 * judged by the ID token instead). No `scope` in the answer means "as requested" (RFC 6749 §5.1).
 * Microsoft may list a Graph scope by its short name (Mail.Send for https://graph.microsoft.com/Mail.Send).
 */
export function missingScopes(asked: string[], granted: string | undefined): string[] {
  if (granted === undefined) return [];
  const have = new Set(granted.split(' ').filter(Boolean));
  const identity = new Set(['openid', 'email', 'profile', 'offline_access']);
  return asked.filter((s) => !identity.has(s) && !have.has(s) && !have.has(s.slice(s.lastIndexOf('/') + 1)));
}

/**
 * The connected address. Google: `email`, only when `email_verified`. Microsoft:
 * `preferred_username` (the sign-in name, the address for work and personal accounts alike), else
 * `email`, which Microsoft does not verify and a tenant admin may set freely, so only a fallback.
 */
export function accountEmail(provider: OAuthProviderName, claims: oauth.IDToken | undefined): string | undefined {
  if (!claims) return undefined;
  const str = (v: unknown) => (typeof v === 'string' && /^[^\s@]+@[^\s@]+$/.test(v) ? v.toLowerCase() : undefined);
  if (provider === 'google') return claims.email_verified === true ? str(claims.email) : undefined;
  return str(claims.preferred_username) ?? str(claims.email);
}

/**
 * Pauses a reconnect lifts: this module's own (mailbox-tokens.ts: "<Provider> access was revoked…",
 * "<Provider> refused Cadenza's OAuth client…"), refused credentials (health/pause.ts
 * credentialsRefusedReason) and a connector that could not be built (cannotConnectReason, from
 * mailbox-pool.ts; "cannot send: " is how the sender said it before the pools shared that rule).
 */
const credentialPauses = [
  /^(Google|Microsoft) access was revoked/,
  /^(Google|Microsoft) refused Cadenza's OAuth client/,
  /^the server refused the mailbox's credentials/,
  /^cannot connect: /,
  /^cannot send: /,
];

export function isCredentialPause(reason: string | null): boolean {
  return reason !== null && credentialPauses.some((r) => r.test(reason));
}

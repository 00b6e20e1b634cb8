import * as oauth from 'oauth4webapi';
import type { Clock } from '../../common/clock.ts';
import { cadenzaError } from '../../common/errors.ts';
import type { Logger } from '../../common/logger.ts';
import type { Random } from '../../common/random.ts';
import { consumeFlow, purgeFlows, saveFlow } from '../../mailbox/oauth/flow-store.ts';
import type { Db } from '../../store/store.ts';
import { connectOrReauthorize, type TokenSealer } from '../connections.ts';
import { DEFAULT_BASE_URLS } from '../kinds.ts';
import { OAUTH_CRMS, type CrmOAuthApp, type CrmOAuthApps, type OAuthCrm } from './apps.ts';
import type { OAuthCredential } from './credential.ts';
import { tokenRequest } from './token-endpoint.ts';

/**
 * Connecting a CRM with OAuth 2 authorization code (RFC 6749 §4.1; PKCE S256, RFC 7636, where the
 * CRM supports it: Salesforce), from Settings → Integrations:
 *
 *   start     a random state (and code verifier), kept in oauth_flow (mailbox/oauth/flow-store.ts,
 *             the table the mailbox connect uses) bound to the workspace, the admin and their web
 *             session, single use, 10 minutes; the admin is sent to the CRM's consent page.
 *   complete  the CRM sends the browser back with code + state (or error + state): the flow is
 *             consumed first, whatever the answer (a state is good for one callback), in the
 *             session and for the person that started it; the code is exchanged; the grant is
 *             sealed as the connection's token (connections.ts), creating the connection or
 *             re-authorizing (new token, resumed) the existing one.
 *
 * Every way it can fail is CRM_AUTH_FAILED, with what happened in plain words for the screen. The
 * tokens never leave this file but sealed; messages carry the CRM's error codes only.
 */
export interface CrmOAuthDeps {
  db: Db;
  sealer: TokenSealer;
  apps: CrmOAuthApps;
  clock: Clock;
  random: Random;
  log?: Logger;
  /** How long a started flow may wait for its callback (default 10 minutes). */
  flowTtlMs?: number;
  /** The rules an API address must pass (api/webhooks/destination.ts): the one the CRM's answer names is checked too. */
  checkUrl?: (url: string) => string;
}

export const CRM_LABELS: Record<OAuthCrm, string> = { hubspot: 'HubSpot', pipedrive: 'Pipedrive', salesforce: 'Salesforce' };

export interface CrmStart {
  workspaceId: string;
  userId: string;
  sessionHash: string;
  kind: OAuthCrm;
  /** <public URL>/oauth/crm/callback, as registered with the CRM's app. */
  redirectUri: string;
  /** The API address the connection will use where the CRM's answer names none (HubSpot). */
  baseUrl?: string;
}

export interface CrmConnected {
  connectionId: string;
  workspaceId: string;
  userId: string | null;
  kind: OAuthCrm;
  created: boolean;
  baseUrl: string;
}

export function appOf(apps: CrmOAuthApps, kind: OAuthCrm): CrmOAuthApp {
  const app = apps[kind];
  if (!app) throw cadenzaError('CONFIG_INVALID', `this server has no ${CRM_LABELS[kind]} OAuth app (CADENZA_${kind.toUpperCase()}_CLIENT_ID and _CLIENT_SECRET): connect ${CRM_LABELS[kind]} with a token instead`);
  return app;
}

export async function startCrmAuthorization(deps: CrmOAuthDeps, req: CrmStart): Promise<{ url: URL; state: string; expiresAt: number }> {
  const app = appOf(deps.apps, req.kind);
  const state = oauth.generateRandomState();
  const verifier = oauth.generateRandomCodeVerifier();
  const now = deps.clock.now();
  const expiresAt = now + (deps.flowTtlMs ?? 10 * 60_000);
  await purgeFlows(deps.db, now);
  await saveFlow(deps.db, {
    state,
    workspace_id: req.workspaceId,
    provider: req.kind,
    mode: 'crm',
    redirect_uri: req.redirectUri,
    code_verifier: verifier,
    nonce: null,
    login_hint: null,
    user_id: req.userId,
    session_hash: req.sessionHash,
    base_url: req.baseUrl ?? null,
    created_at: new Date(now),
    expires_at: new Date(expiresAt),
  });
  const url = new URL(app.authorizeUrl);
  const p = url.searchParams;
  p.set('client_id', app.clientId);
  p.set('redirect_uri', req.redirectUri);
  p.set('response_type', 'code');
  if (app.scopes.length) p.set('scope', app.scopes.join(' '));
  p.set('state', state);
  if (app.pkce) {
    p.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    p.set('code_challenge_method', 'S256');
  }
  return { url, state, expiresAt };
}

const failed = (message: string, details: Record<string, unknown> = {}) => cadenzaError('CRM_AUTH_FAILED', message, details);

/** Completes a flow from the callback's query, for the signed-in person and session bringing it. */
export interface CrmCaller {
  /** The callback's web session (auth_session.id_hash); none: every flow is another session's. */
  sessionHash: string | undefined;
  /** The person, if they are (still) an admin of the flow's workspace. */
  adminIn(workspaceId: string): Promise<string | undefined>;
}

export async function completeCrmAuthorization(deps: CrmOAuthDeps, callback: URLSearchParams, who: CrmCaller): Promise<CrmConnected> {
  const state = callback.get('state');
  if (!state) throw failed('the CRM sent you back without the sign-in state; start the connection again from Settings → Integrations', { reason: 'no_state' });
  const consumed = await consumeFlow(deps.db, state, deps.clock.now(), who.sessionHash ?? '', OAUTH_CRMS);
  if (!consumed.ok) {
    const why = {
      unknown: 'this sign-in is unknown to Cadenza',
      used: 'this sign-in was already completed (a link can be used once)',
      expired: 'this sign-in took more than 10 minutes and expired',
      other_session: 'this sign-in was started by someone else, or in another browser session',
    }[consumed.reason];
    throw failed(`${why}; start the connection again from Settings → Integrations`, { reason: consumed.reason });
  }
  const flow = consumed.flow;
  const kind = flow.provider as OAuthCrm;
  const label = CRM_LABELS[kind];
  // The session binding makes the person the same already; asked again because they may have lost the admin role in those minutes.
  if (flow.user_id === null || flow.user_id !== (await who.adminIn(flow.workspace_id))) throw failed(`this sign-in was started by someone else; start the connection again from Settings → Integrations`, { reason: 'other_user' });
  const denied = callback.get('error');
  if (denied) {
    const text = callback.get('error_description');
    const words = denied === 'access_denied' || denied === 'user_denied' ? `${label} access was not granted (you declined, or your ${label} account may not install apps)` : `${label} refused the connection (${denied}${text ? `: ${text}` : ''})`;
    throw failed(words, { reason: 'denied', oauthError: denied });
  }
  const code = callback.get('code');
  if (!code) throw failed(`${label} sent you back without an authorization code; start the connection again`, { reason: 'no_code' });
  const app = appOf(deps.apps, kind);
  const r = await tokenRequest(app, { grant_type: 'authorization_code', code, redirect_uri: flow.redirect_uri, ...(app.pkce ? { code_verifier: flow.code_verifier } : {}) }, { clock: deps.clock });
  if (!r.ok) {
    const words = r.kind === 'refused' ? `${label} refused the authorization code (${r.error})` : `${label}'s token endpoint did not answer usefully (${r.error})`;
    throw failed(`${words}; start the connection again`, { reason: 'exchange', transient: r.kind === 'unavailable' });
  }
  const t = r.answer;
  if (!t.refreshToken) throw failed(`${label} gave no refresh token, so Cadenza could not keep access; check the app's settings (Salesforce: the refresh_token scope) and connect again`, { reason: 'no_refresh_token' });
  const rawBase = t.apiUrl ?? flow.base_url ?? DEFAULT_BASE_URLS[kind];
  if (!rawBase) throw failed(`${label} did not say which address to use; connect again`, { reason: 'no_address' });
  let baseUrl: string;
  try {
    baseUrl = (deps.checkUrl ? deps.checkUrl(rawBase) : new URL(rawBase).href).replace(/\/+$/, '');
  } catch (e) {
    throw failed(`${label} named an API address Cadenza does not send to (${(e as Error).message})`, { reason: 'address' });
  }
  const now = deps.clock.now();
  const token =
    kind === 'salesforce'
      ? // The credential the Salesforce connector already refreshes from (salesforce/credentials.ts).
        JSON.stringify({ refreshToken: t.refreshToken, clientId: app.clientId, clientSecret: app.clientSecret, instanceUrl: baseUrl })
      : JSON.stringify({
          oauth: kind,
          accessToken: t.accessToken,
          refreshToken: t.refreshToken,
          expiresAt: now + (t.expiresIn ?? 1800) * 1000,
          tokenUrl: app.tokenUrl,
          clientId: app.clientId,
          clientSecret: app.clientSecret,
          clientAuth: app.clientAuth,
        } satisfies OAuthCredential);
  const done = await connectOrReauthorize({ db: deps.db, random: deps.random, now, sealer: deps.sealer }, { workspaceId: flow.workspace_id, kind, baseUrl, token });
  deps.log?.info({ connectionId: done.id, kind, created: done.created }, 'CRM connected with OAuth');
  return { connectionId: done.id, workspaceId: flow.workspace_id, userId: flow.user_id, kind, created: done.created, baseUrl };
}

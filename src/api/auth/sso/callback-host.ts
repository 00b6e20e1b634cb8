/**
 * Where a single sign-on comes back to (issue 19): the redirect URI of a sign-in is on the host the
 * browser started it on, so that the binding cookie set at the start (host-only) is sent with the
 * callback, and the session cookie lands on the host the person uses. Two kinds of host qualify:
 *
 *   the public URL's           `<CADENZA_PUBLIC_URL>/oauth/sso/callback`, for any workspace, and
 *                              for any Host that is not an agency client's app host (a Host header
 *                              picks nothing: the URI is the configured one);
 *   a client's own app host    `https://<host>[:<port>]/oauth/sso/callback`, only for the workspace
 *                              whose app host it is (tracking_domain, purpose 'app', 0103), and
 *                              only while its CNAME is verified and its certificate served
 *                              (active or renewing): the name comes from the database, never from
 *                              the request, so a forged Host cannot choose a redirect URI.
 *
 * The port is the custom hosts' HTTPS listener's (443 in production: no port in the URI). A client
 * host of another workspace, or one not yet serving, is refused in words. Pure decisions, and the
 * two reads they need.
 */
import type { Db, Tx } from '../../../store/store.ts';
import { SERVING_STATES } from '../../../tracking/domains/policy.ts';
import { domainByHost, domainOfWorkspace, type DomainRow } from '../../../tracking/domains/sql/tracking-domain.ts';

export const SSO_CALLBACK_PATH = '/oauth/sso/callback';

export interface CallbackSettings {
  publicUrl: string;
  /** The HTTPS port client app hosts are served on; undefined: custom hosts are off here. */
  appHttpsPort: number | undefined;
}

type HostRow = Pick<DomainRow, 'workspaceId' | 'purpose' | 'host' | 'state'>;

export type CallbackChoice =
  | { ok: true; redirectUri: string; base: string; clientHost: string | null }
  | { ok: false; reason: 'unverified_host' | 'other_workspace'; message: string };

export const publicBase = (s: CallbackSettings) => s.publicUrl.replace(/\/+$/, '');

export function clientBase(host: string, port: number): string {
  return `https://${host}${port === 443 ? '' : `:${port}`}`;
}

const isClientHost = (row: HostRow | undefined): row is HostRow => row?.purpose === 'app';
const serving = (s: CallbackSettings, row: HostRow) => s.appHttpsPort !== undefined && SERVING_STATES.includes(row.state);

/**
 * The redirect URI for a sign-in into `workspaceId` started on the host `row` describes (the row of
 * the request's Host in tracking_domain, if any).
 */
export function chooseCallback(s: CallbackSettings, row: HostRow | undefined, workspaceId: string): CallbackChoice {
  if (!isClientHost(row)) return { ok: true, redirectUri: `${publicBase(s)}${SSO_CALLBACK_PATH}`, base: publicBase(s), clientHost: null };
  if (row.workspaceId !== workspaceId) {
    return { ok: false, reason: 'other_workspace', message: `${row.host} signs in to its own workspace only; sign in to this one on its own address` };
  }
  if (!serving(s, row)) {
    const why = s.appHttpsPort === undefined ? 'this server does not serve custom hosts (CADENZA_TRACKING_HTTPS_PORT is not set)' : 'it waits until the domain is verified and its certificate issued';
    return { ok: false, reason: 'unverified_host', message: `single sign-on cannot come back to ${row.host}: ${why}; sign in on ${new URL(s.publicUrl).host} meanwhile` };
  }
  const base = clientBase(row.host, s.appHttpsPort!);
  return { ok: true, redirectUri: `${base}${SSO_CALLBACK_PATH}`, base, clientHost: row.host };
}

/**
 * Where a browser at the callback is sent afterwards (the app, or the SSO form with the reason):
 * the host it is on when that is a serving client app host, else the public URL. Known before the
 * flow is: a refusal of an unknown state still lands on the page the person came from.
 */
export function landingBase(s: CallbackSettings, row: HostRow | undefined): string {
  return isClientHost(row) && serving(s, row) ? clientBase(row.host, s.appHttpsPort!) : publicBase(s);
}

// Reads. A request's Host is looked up as given (lower case, no port: challenge-route.ts requestHost).
export async function hostRow(db: Db | Tx, host: string | undefined): Promise<HostRow | undefined> {
  return host ? domainByHost(db, host) : undefined;
}

/** The workspace whose client app host this is (the branded sign-in page's), if any. */
export async function workspaceOfAppHost(db: Db | Tx, host: string | undefined): Promise<string | undefined> {
  const row = await hostRow(db, host);
  return isClientHost(row) ? row.workspaceId : undefined;
}

/** Every redirect URI the workspace's admins register at their provider: the public one, then each serving client app host's. */
export async function redirectUrisOf(db: Db | Tx, s: CallbackSettings, workspaceId: string): Promise<string[]> {
  const app = await domainOfWorkspace(db, workspaceId, 'app');
  const uris = [`${publicBase(s)}${SSO_CALLBACK_PATH}`];
  const own = chooseCallback(s, app, workspaceId);
  if (own.ok && own.clientHost) uris.push(own.redirectUri);
  return uris;
}

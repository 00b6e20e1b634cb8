import { createHmac } from 'node:crypto';

/**
 * Ephemeral credentials for the browser softphone (docs/dialer.md): the "TURN REST API" scheme
 * (draft-uberti-behave-turn-rest-00) that coturn checks with `use-auth-secret` and Kamailio's
 * auth_ephemeral module checks for SIP. The username is `expiry:userId` (expiry in Unix seconds),
 * the password base64(HMAC-SHA1(secret, username)). Nothing is stored on either server: whoever
 * holds the shared secret can check a credential, and it expires by itself.
 *
 * Pure: the clock is a parameter, and the secrets come from the caller (config), never logged.
 */
export interface SipCredentialSettings {
  /** wss:// URL of Kamailio's WebSocket listener (RFC 7118). */
  wsUrl: string;
  /** The SIP domain reps register in. */
  domain: string;
  /** Kamailio's auth_ephemeral secret. */
  sipSecret: string;
  /** turn: / turns: / stun: URLs offered to the browser (may be empty). */
  turnUrls: readonly string[];
  /** coturn's static-auth-secret; absent: the TURN URLs are offered without credentials (stun: only). */
  turnSecret?: string;
  /** How long a credential is valid, in seconds. */
  ttlSeconds: number;
}

export interface IceServer {
  urls: string[];
  username?: string;
  credential?: string;
}

export interface SipCredentials {
  wsUrl: string;
  /** sip:userId@domain: the rep's address of record. */
  sipUri: string;
  /** The digest username: `expiry:userId`, with `:rec` and `:+E164` when the options give them. */
  authorizationUser: string;
  password: string;
  /** When the credential stops working (ISO 8601). */
  expiresAt: string;
  iceServers: IceServer[];
}

/** `expiry:userId` and its password, as coturn and auth_ephemeral compute them. */
export function ephemeralCredential(secret: string, userId: string, expiresAtSeconds: number): { username: string; password: string } {
  // auth_ephemeral's username_format 1 (timestamp first): it reads the expiry up to the first colon
  // and signs the whole username, so a `:rec` after the user id is covered by the HMAC.
  const username = `${expiresAtSeconds}:${userId}`;
  return { username, password: createHmac('sha1', secret).update(username).digest('base64') };
}

/**
 * A SIP user part is limited (RFC 3261 user = unreserved / escaped / user-unreserved); Cadenza's
 * user ids are UUIDs, and the colon would break the `expiry:userId` username, so anything else is refused.
 */
export function isSipUserId(userId: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(userId);
}

/**
 * The suffix of a SIP digest username whose calls rtpengine records (`expiry:userId:rec`). It is
 * inside the HMAC, so only Cadenza, which reads the workspace's setting when it issues the
 * credential, decides it; the browser can neither add nor remove it. Kamailio reads it after
 * auth_ephemeral checked the credential (deploy/telephony/kamailio.cfg, route AUTH). The SIP
 * identity (the From and To user) stays the plain userId, so registration and incoming calls do
 * not depend on the setting (nor on the rep's number, signed after it: IssueOptions.phoneNumber).
 */
export const RECORD_SUFFIX = ':rec';

export interface IssueOptions {
  /** The workspace records calls (dialer/recording/settings.ts). */
  record?: boolean;
  /**
   * The rep's number on the trunk (E.164, rep-number.ts), signed in as the username's last part
   * (`expiry:userId[:rec]:+E164`): Kamailio puts it in the From and P-Asserted-Identity of the
   * calls they place (their caller ID) and sends incoming calls to that DID to their browser. In
   * the HMAC, so a browser cannot call as another rep's number or claim another rep's DID.
   */
  phoneNumber?: string | null;
}

const E164 = /^\+[1-9][0-9]{6,14}$/;

/** The digest username's part after the expiry: `userId`, then `:rec` and `:+E164` when given. */
export function signedUser(userId: string, o: IssueOptions = {}): string {
  if (o.phoneNumber && !E164.test(o.phoneNumber)) throw new Error(`not an E.164 number: ${JSON.stringify(o.phoneNumber)}`);
  return `${userId}${o.record ? RECORD_SUFFIX : ''}${o.phoneNumber ? `:${o.phoneNumber}` : ''}`;
}

export function issueSipCredentials(settings: SipCredentialSettings, userId: string, nowMs: number, o: IssueOptions = {}): SipCredentials {
  if (!isSipUserId(userId)) throw new Error(`not a SIP user id: ${JSON.stringify(userId)}`);
  const expiry = Math.floor(nowMs / 1000) + settings.ttlSeconds;
  const sip = ephemeralCredential(settings.sipSecret, signedUser(userId, o), expiry);
  const iceServers: IceServer[] = [];
  const turn = settings.turnUrls.filter((u) => /^turns?:/.test(u));
  const stun = settings.turnUrls.filter((u) => /^stun:/.test(u));
  if (turn.length && settings.turnSecret) {
    const t = ephemeralCredential(settings.turnSecret, userId, expiry);
    iceServers.push({ urls: turn, username: t.username, credential: t.password });
  }
  if (stun.length) iceServers.push({ urls: stun });
  return {
    wsUrl: settings.wsUrl,
    sipUri: `sip:${userId}@${settings.domain}`,
    authorizationUser: sip.username,
    password: sip.password,
    expiresAt: new Date(expiry * 1000).toISOString(),
    iceServers,
  };
}

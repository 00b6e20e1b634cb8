import { isCadenzaError } from '../../common/errors.ts';
import type { Endpoint } from '../settings.ts';

/**
 * Why a mailbox's server could not be used, in words a person can act on. One kind per way it
 * fails, each with a hint; the server's own words go in `detail`. Pure: it reads the error
 * imapflow (through connectImap, errors.ts) or nodemailer's SMTP client gave, never the network.
 */
export type ConnectionProblemKind =
  /** The host name does not resolve (typo, or a name that only exists on another network). */
  | 'dns'
  /** The host is where Cadenza does not connect: loopback, cloud metadata, or a private network not allowed (mailbox/mail-hosts.ts). */
  | 'refused_destination'
  /** Nothing accepts connections there: refused, no route, network down. */
  | 'unreachable'
  /** It did not answer in time: a firewall dropping packets, or a server too slow or overloaded. */
  | 'timeout'
  /** TLS failed: an untrusted or self-signed certificate, a name mismatch, a port that does not
   *  speak TLS (or speaks only TLS), or STARTTLS not offered. */
  | 'tls'
  /** The server refused the user name and password (or the OAuth token). */
  | 'auth_failed'
  /** The credentials were accepted, but the account may not use IMAP (switched off, or a plan
   *  without it): Gmail "[ALERT] Your account is not enabled for IMAP use", Dovecot nologin
   *  "[CONTACTADMIN]", RFC 5530 [AUTHORIZATIONFAILED]. */
  | 'imap_disabled'
  /** Something answered, but not as an IMAP or SMTP server would. */
  | 'protocol';

export interface ConnectionProblem {
  kind: ConnectionProblemKind;
  message: string;
  hint: string;
  /** What the server or the socket said (never credentials). */
  detail: string;
}

type Protocol = 'imap' | 'smtp';

const tlsCodes = /^(ERR_SSL_|ERR_TLS_|ETLS$|EPROTO$|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|CERT_|HOSTNAME_MISMATCH)/;
const tlsText = /wrong version number|packet length too long|unknown protocol|self[- ]signed|certificate|ssl routines|tls|starttls|handshake/i;
const disabledText = /not enabled for imap|imap (access )?(is )?(disabled|not enabled|not allowed)|imap-access-is-disabled/i;

/** The code and the words of an error from connectImap (a CadenzaError with details) or from nodemailer. */
function partsOf(e: unknown): { code: string; responseCode: string; text: string; detail: string; authFailed: boolean } {
  if (isCadenzaError(e)) {
    const d = e.details as { code?: string | null; serverResponseCode?: string | null; response?: string | null };
    return { code: d.code ?? '', responseCode: (d.serverResponseCode ?? '').toUpperCase(), text: `${e.message} ${d.response ?? ''}`, detail: d.response || e.message, authFailed: e.code === 'MAILBOX_AUTH_FAILED' };
  }
  const err = (e ?? {}) as { code?: string; message?: string; response?: string; responseCode?: number; command?: string };
  const code = err.code ?? '';
  const message = err.message ?? String(e);
  return { code, responseCode: '', text: `${message} ${err.response ?? ''}`, detail: message, authFailed: code === 'EAUTH' };
}

export function classifyConnectionError(protocol: Protocol, endpoint: Pick<Endpoint, 'host' | 'port' | 'security'>, e: unknown): ConnectionProblem {
  const { code, responseCode, text, detail: said, authFailed } = partsOf(e);
  const where = `${endpoint.host}:${endpoint.port}`;
  const P = protocol.toUpperCase();
  const detail = said.trim().slice(0, 500);
  const make = (kind: ConnectionProblemKind, message: string, hint: string): ConnectionProblem => ({ kind, message, hint, detail });
  if (isCadenzaError(e) && (e.code === 'INVALID_INPUT' || e.details.refused === true)) {
    return make('refused_destination', `${P}: ${e.message.replace(/^IMAP connect: /, '')}`, 'Use the mail server\'s public name, or ask the operator to allow private mail servers (CADENZA_MAIL_ALLOW_PRIVATE).');
  }

  if (protocol === 'imap' && (responseCode === 'CONTACTADMIN' || responseCode === 'AUTHORIZATIONFAILED' || disabledText.test(text))) {
    return make('imap_disabled', `${P}: the server accepted the password but refuses IMAP for this account`, 'Turn IMAP access on in the account\'s settings (Gmail: Settings > Forwarding and POP/IMAP; Microsoft 365: the admin enables IMAP for the user), or ask the mail administrator.');
  }
  if (authFailed || code === 'EAUTH' || responseCode === 'AUTHENTICATIONFAILED') {
    return make('auth_failed', `${P}: the server refused the user name or password`, 'Check the user name (often the full address) and the password. With two-step verification, Gmail, iCloud, Yahoo and Outlook need an app password instead of the account password.');
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EDNS' || /getaddrinfo|ENOTFOUND|EAI_AGAIN/.test(text)) {
    return make('dns', `${P}: the host name ${endpoint.host} does not resolve`, 'Check the server name for typos; the provider\'s help pages list the IMAP and SMTP host names.');
  }
  if (/ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|EADDRNOTAVAIL/.test(`${code} ${text}`)) {
    return make('unreachable', `${P}: nothing accepts connections on ${where}`, `Check the host and the port (IMAP: 993 with TLS, 143 with STARTTLS; SMTP: 465 with TLS, 587 with STARTTLS), and that no firewall blocks them.`);
  }
  if (/ETIMEDOUT|ETIMEOUT|CONNECT_TIMEOUT|GreetingTimeout|timed? ?out|timeout/i.test(`${code} ${text}`)) {
    return make('timeout', `${P}: ${where} did not answer in time`, 'A firewall may be dropping the connection, or the port is wrong (a TLS port waits for a handshake that a plain client never starts). Check the port and the security setting.');
  }
  if (tlsCodes.test(code) || tlsText.test(text)) {
    const selfSigned = /self[- ]signed|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/i.test(`${code} ${text}`);
    const wrongPort = /wrong version number|packet length too long|unknown protocol|http request/i.test(text);
    const noStarttls = /starttls/i.test(text) && !wrongPort;
    const hint = selfSigned
      ? 'The server\'s certificate is self-signed or not from a trusted authority. Use the provider\'s proper host name, or, for a server you run yourself, allow self-signed certificates.'
      : wrongPort
        ? endpoint.security === 'tls'
          ? `The port does not speak TLS from the first byte: use security "starttls" on this port, or the TLS port (${protocol === 'imap' ? '993' : '465'}).`
          : `The port expects TLS from the first byte: use security "tls" (${protocol === 'imap' ? '993' : '465'}).`
        : noStarttls
          ? `The server does not offer STARTTLS on this port: use security "tls" and port ${protocol === 'imap' ? '993' : '465'}.`
          : 'The TLS handshake failed: check the host name (it must match the certificate), the port and the security setting.';
    return make('tls', `${P}: TLS failed on ${where}${selfSigned ? ' (untrusted certificate)' : wrongPort ? ' (the port does not speak TLS as configured)' : noStarttls ? ' (no STARTTLS)' : ''}`, hint);
  }
  if (/ECONNRESET|EPIPE|closed|ended|unexpected/i.test(`${code} ${text}`)) {
    return make('protocol', `${P}: ${where} closed the connection`, `Check that ${where} is the ${P} server and that the security setting matches the port.`);
  }
  return make('protocol', `${P}: ${where} did not answer as an ${P} server`, `Check that ${where} is the ${P} server and that the security setting matches the port.`);
}

import { describe, expect, it } from 'vitest';
import { cadenzaError } from '../../common/errors.ts';
import { classifyConnectionError } from './connection-problem.ts';

const imap = { host: 'imap.example.com', port: 993, security: 'tls' as const };
const smtp = { host: 'smtp.example.com', port: 587, security: 'starttls' as const };
/** What connectImap throws (errors.ts): a CadenzaError carrying imapflow's code and the server's words. */
const fromImap = (code: 'MAILBOX_AUTH_FAILED' | 'MAILBOX_UNAVAILABLE', message: string, d: { code?: string; serverResponseCode?: string; response?: string } = {}) =>
  cadenzaError(code, `IMAP connect: ${message}`, { doing: 'connect', code: d.code ?? null, serverResponseCode: d.serverResponseCode ?? null, response: d.response ?? null });
const nodeError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('classifyConnectionError', () => {
  it("tells a refused password from an account without IMAP (providers' own answers)", () => {
    const gmailOff = fromImap('MAILBOX_AUTH_FAILED', 'the server refused the credentials', { serverResponseCode: 'ALERT', response: 'Your account is not enabled for IMAP use. Please visit your Gmail settings page and enable your account for IMAP access.' });
    expect(classifyConnectionError('imap', imap, gmailOff).kind).toBe('imap_disabled');
    expect(classifyConnectionError('imap', imap, fromImap('MAILBOX_AUTH_FAILED', 'refused', { serverResponseCode: 'AUTHORIZATIONFAILED', response: 'Authorization failed' })).kind).toBe('imap_disabled');
    const appPassword = fromImap('MAILBOX_AUTH_FAILED', 'refused', { serverResponseCode: 'ALERT', response: 'Application-specific password required: https://support.google.com/accounts/answer/185833 (Failure)' });
    const r = classifyConnectionError('imap', imap, appPassword);
    expect(r.kind).toBe('auth_failed');
    expect(r.hint).toMatch(/app password/);
    expect(r.detail).toMatch(/^Application-specific password required/);
    expect(classifyConnectionError('smtp', smtp, Object.assign(nodeError('EAUTH', 'Invalid login: 535 5.7.8 Username and Password not accepted'), { responseCode: 535 })).kind).toBe('auth_failed');
  });

  it('names network failures by what a person can check: DNS, unreachable, timeout', () => {
    expect(classifyConnectionError('imap', imap, fromImap('MAILBOX_UNAVAILABLE', 'getaddrinfo ENOTFOUND imap.exmaple.com', { code: 'ENOTFOUND' })).kind).toBe('dns');
    expect(classifyConnectionError('smtp', smtp, nodeError('EDNS', 'getaddrinfo EAI_AGAIN smtp.example.com')).kind).toBe('dns');
    for (const code of ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH']) expect(classifyConnectionError('smtp', smtp, nodeError(code, `connect ${code} 192.0.2.1:587`)).kind).toBe('unreachable');
    expect(classifyConnectionError('imap', imap, fromImap('MAILBOX_UNAVAILABLE', 'Failed to establish connection in required time', { code: 'CONNECT_TIMEOUT' })).kind).toBe('timeout');
    expect(classifyConnectionError('smtp', smtp, nodeError('ETIMEDOUT', 'Greeting never received')).kind).toBe('timeout');
  });

  it('says which TLS problem it is: untrusted certificate, wrong port, no STARTTLS', () => {
    const expired = classifyConnectionError('imap', imap, fromImap('MAILBOX_UNAVAILABLE', 'certificate has expired', { code: 'CERT_HAS_EXPIRED' }));
    expect(expired.kind).toBe('tls');
    const selfSigned = classifyConnectionError('smtp', smtp, nodeError('ESOCKET', 'self-signed certificate'));
    expect(selfSigned.message).toMatch(/untrusted certificate/);
    const wrongPort = classifyConnectionError('imap', imap, fromImap('MAILBOX_UNAVAILABLE', 'error:0A00010B:SSL routines:ssl3_get_record:wrong version number', { code: 'ERR_SSL_WRONG_VERSION_NUMBER' }));
    expect(wrongPort.hint).toMatch(/starttls/);
    const noStarttls = classifyConnectionError('smtp', smtp, nodeError('ETLS', 'Server does not support STARTTLS'));
    expect(noStarttls.message).toMatch(/no STARTTLS/);
  });

  it('anything else that answered is a protocol problem, never a crash', () => {
    expect(classifyConnectionError('imap', imap, fromImap('MAILBOX_UNAVAILABLE', 'Unexpected greeting', {})).kind).toBe('protocol');
    expect(classifyConnectionError('imap', imap, undefined).kind).toBe('protocol');
  });
});

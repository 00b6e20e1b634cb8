import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import { smtpLogin } from '../connectors/smtp-imap/login.ts';
import type { MailAuth } from './account.ts';
import { connectImap } from './connect.ts';
import { pinnedHost } from '../mail-hosts.ts';
import { classifyConnectionError, type ConnectionProblem } from './connection-problem.ts';
import { findSpecialFolders } from './special-folders.ts';
import type { Endpoint } from '../settings.ts';

/**
 * "Test the connection" for an SMTP/IMAP mailbox: signs in to each server the way the sender
 * and the sync will, reads what they offer, and says in plain words what is wrong when something
 * is. Nothing is sent and nothing in the mailbox changes (no SELECT, no APPEND).
 *
 * IMAP: connect, TLS, LOGIN (or XOAUTH2), CAPABILITY, LIST → Sent, Junk, Trash (SPECIAL-USE,
 * then names). SMTP: connect, EHLO, STARTTLS, AUTH, QUIT.
 */
export interface ConnectionTestInput {
  username: string;
  auth: MailAuth;
  imap?: Endpoint;
  smtp?: Endpoint;
  /** For each server, connect + greeting + every command (default 10 s each phase). */
  timeoutMs?: number;
}

export interface ImapFeatures {
  idle: boolean;
  condstore: boolean;
  qresync: boolean;
  specialUse: boolean;
  move: boolean;
  uidplus: boolean;
}

export type ImapCheck =
  | { ok: true; tls: boolean; capabilities: string[]; features: ImapFeatures; folders: { sent: string | null; junk: string | null; trash: string | null }; warnings: string[]; tookMs: number }
  | { ok: false; problem: ConnectionProblem; tookMs: number };

export type SmtpCheck =
  | { ok: true; tls: boolean; authMechanisms: string[]; maxSize: number | null; warnings: string[]; tookMs: number }
  | { ok: false; problem: ConnectionProblem; tookMs: number };

export interface ConnectionReport {
  ok: boolean;
  imap: ImapCheck | null;
  smtp: SmtpCheck | null;
}

const DEFAULT_TIMEOUT = 10_000;
const loopback = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host);

export async function testConnection(input: ConnectionTestInput): Promise<ConnectionReport> {
  const [imap, smtp] = await Promise.all([input.imap ? testImap(input, input.imap) : null, input.smtp ? testSmtp(input, input.smtp) : null]);
  return { ok: (imap?.ok ?? true) && (smtp?.ok ?? true) && (imap !== null || smtp !== null), imap, smtp };
}

export async function testImap(input: ConnectionTestInput, endpoint: Endpoint): Promise<ImapCheck> {
  const t0 = performance.now();
  const ms = input.timeoutMs ?? DEFAULT_TIMEOUT;
  const took = () => Math.round(performance.now() - t0);
  let client;
  try {
    client = await connectImap({ endpoint, username: input.username, auth: input.auth, timeouts: { connectMs: ms, greetingMs: ms, socketMs: ms } });
  } catch (e) {
    return { ok: false, problem: classifyConnectionError('imap', endpoint, e), tookMs: took() };
  }
  try {
    const capabilities = [...client.capabilities.keys()].sort();
    const has = (c: string) => client.capabilities.has(c);
    const features: ImapFeatures = { idle: has('IDLE'), condstore: has('CONDSTORE'), qresync: has('QRESYNC'), specialUse: has('SPECIAL-USE'), move: has('MOVE'), uidplus: has('UIDPLUS') };
    const folders = await findSpecialFolders(client);
    const warnings: string[] = [];
    if (!features.idle) warnings.push('no IDLE: replies are found by polling, minutes late instead of seconds');
    if (!features.condstore) warnings.push('no CONDSTORE: each sync compares UIDs (works, slightly more traffic)');
    if (!folders.sent) warnings.push('no Sent folder found: choose one, or sent mail cannot be confirmed');
    if (!folders.junk) warnings.push('no Junk folder found: replies filed as spam will be missed');
    const tls = endpoint.security !== 'none';
    if (!tls && !loopback(endpoint.host)) warnings.push('the connection is not encrypted: the password crosses the network in clear');
    return { ok: true, tls, capabilities, features, folders, warnings, tookMs: took() };
  } catch (e) {
    return { ok: false, problem: classifyConnectionError('imap', endpoint, e), tookMs: took() };
  } finally {
    if (client.usable) await client.logout().catch(() => client.close());
    else client.close();
  }
}

export async function testSmtp(input: ConnectionTestInput, endpoint: Endpoint): Promise<SmtpCheck> {
  const t0 = performance.now();
  const ms = input.timeoutMs ?? DEFAULT_TIMEOUT;
  const took = () => Math.round(performance.now() - t0);
  // The host under the destination policy; the connection goes to the vetted address (mail-hosts.ts).
  let pin: { host: string; servername?: string };
  try {
    pin = await pinnedHost(endpoint.host);
  } catch (e) {
    return { ok: false, problem: classifyConnectionError('smtp', endpoint, e), tookMs: took() };
  }
  return new Promise<SmtpCheck>((resolve) => {
    let settled = false;
    const conn = new SMTPConnection({
      host: pin.host,
      ...(pin.servername ? { servername: pin.servername } : {}),
      port: endpoint.port,
      secure: endpoint.security === 'tls',
      requireTLS: endpoint.security === 'starttls',
      ignoreTLS: endpoint.security === 'none',
      tls: { rejectUnauthorized: !endpoint.allowSelfSigned, ...(pin.servername ? { servername: pin.servername } : {}) },
      connectionTimeout: ms,
      greetingTimeout: ms,
      socketTimeout: ms,
    });
    const finish = (r: SmtpCheck) => {
      if (settled) return;
      settled = true;
      if (r.ok) conn.quit();
      conn.close();
      resolve(r);
    };
    const fail = (e: unknown) => finish({ ok: false, problem: classifyConnectionError('smtp', endpoint, e), tookMs: took() });
    conn.on('error', fail);
    conn.on('end', () => fail(Object.assign(new Error('the server closed the connection'), { code: 'ECONNRESET' })));
    conn.connect((err) => {
      if (err) return fail(err);
      const c = conn as unknown as { allowsAuth?: boolean; _supportedAuth?: string[]; _maxAllowedSize?: number; secure?: boolean };
      const authMechanisms = [...(c._supportedAuth ?? [])];
      if (!c.allowsAuth) {
        return fail(Object.assign(new Error('the server offers no AUTH on this connection (is STARTTLS required first?)'), { code: 'EAUTH' }));
      }
      conn.login(smtpLogin(input.auth, input.username), (e?: Error | null) => {
        if (e) return fail(e);
        const warnings: string[] = [];
        const tls = endpoint.security !== 'none';
        if (!tls && !loopback(endpoint.host)) warnings.push('the connection is not encrypted: the password crosses the network in clear');
        finish({ ok: true, tls, authMechanisms, maxSize: c._maxAllowedSize || null, warnings, tookMs: took() });
      });
    });
  });
}


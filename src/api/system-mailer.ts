import nodemailer from 'nodemailer';
import SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { cadenzaError } from '../common/errors.ts';

/**
 * Mail Cadenza sends as itself (invitations, the weekly report), not from a rep's mailbox: one SMTP account for the
 * whole installation, configured by CADENZA_SMTP_URL and CADENZA_MAIL_FROM. Without one, the API
 * hands the links to the admin instead (docs/api.md "Invitations").
 */
export interface SystemMailer {
  /** The From address, for messages and for the UI to say where invitations come from. */
  readonly from: string;
  send(m: SystemMessage): Promise<{ messageId: string }>;
  close(): void;
}

/** A message Cadenza sends as itself: to one address or several (comma-separated), text, files attached. */
export interface SystemMessage {
  to: string;
  subject: string;
  text: string;
  attachments?: Array<{ filename: string; content: string; contentType: string }>;
}

export interface SystemMailerSettings {
  /** smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465; nodemailer's query options such as ?tls.rejectUnauthorized=false apply. */
  url: string;
  from: string;
}

/** The settings from the configuration, or undefined when no SMTP URL is set. */
export function systemMailerSettingsFrom(cfg: { CADENZA_SMTP_URL?: string | undefined; CADENZA_MAIL_FROM?: string | undefined }): SystemMailerSettings | undefined {
  if (!cfg.CADENZA_SMTP_URL) return undefined;
  let from = cfg.CADENZA_MAIL_FROM;
  if (!from) {
    // The account's own address is the one sender every SMTP service accepts, when it is an address.
    const user = decodeURIComponent(new URL(cfg.CADENZA_SMTP_URL).username);
    if (!user.includes('@')) throw cadenzaError('CONFIG_INVALID', 'CADENZA_MAIL_FROM is needed: the SMTP user in CADENZA_SMTP_URL is not an email address');
    from = user;
  }
  return { url: cfg.CADENZA_SMTP_URL, from };
}

/**
 * A nodemailer transport, one connection per message: invitations are rare, and a pool would hold
 * a socket open between them. Deadlines are short because an admin waits on the answer; a send
 * that fails leaves the invitation in place with its link returned (routes/invitations.ts).
 */
export function smtpSystemMailer(s: SystemMailerSettings): SystemMailer {
  // The transport itself, not createTransport(url): that would drop every option beside the URL's.
  const transport = nodemailer.createTransport(new SMTPTransport({ url: s.url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 }));
  return {
    from: s.from,
    async send(m) {
      const info = await transport.sendMail({ from: s.from, to: m.to, subject: m.subject, text: m.text, ...(m.attachments ? { attachments: m.attachments } : {}) });
      return { messageId: info.messageId };
    },
    close: () => transport.close(),
  };
}

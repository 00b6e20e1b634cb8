import { z } from 'zod';
import { cadenzaError } from '../common/errors.ts';

/**
 * Where a mailbox's servers are, kept in `mailbox.settings` (not secret). The password or token
 * lives in the vault (vault.ts), never here.
 */
const endpoint = z.object({
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65535),
  /** tls: TLS from the first byte (465, 993); starttls: upgrade after connecting (587, 143); none: loopback test servers only. */
  security: z.enum(['tls', 'starttls', 'none']),
  /** Accept a self-signed certificate (a test server, or a private relay the user trusts). */
  allowSelfSigned: z.boolean().default(false),
});

export const mailboxSettingsSchema = z.object({
  smtp: endpoint.optional(),
  imap: endpoint.optional(),
  /** Set when the mailbox was connected with OAuth (mailbox/oauth): whose token endpoint refreshes its grant, and for which protocols. */
  oauth: z.object({ provider: z.enum(['google', 'microsoft']), mode: z.enum(['api', 'imap']) }).optional(),
  /** Does the submission server file a copy into Sent (Gmail, Outlook, most hosts)? If not, Cadenza appends one over IMAP. */
  serverSavesSent: z.boolean().default(true),
});

export type MailboxSettings = z.infer<typeof mailboxSettingsSchema>;
export type Endpoint = z.infer<typeof endpoint>;

export function parseMailboxSettings(raw: unknown): MailboxSettings {
  const r = mailboxSettingsSchema.safeParse(raw ?? {});
  if (!r.success) throw cadenzaError('INVALID_INPUT', `invalid mailbox settings: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return r.data;
}

/** The usual ports for a security mode, so users type less. */
export function defaultPort(kind: 'smtp' | 'imap', security: Endpoint['security']): number {
  if (kind === 'smtp') return security === 'tls' ? 465 : 587;
  return security === 'tls' ? 993 : 143;
}

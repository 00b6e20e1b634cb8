import { z } from 'zod';
import { parseResolverAddress } from './dns-resolver.ts';
import { cadenzaError } from './errors.ts';

const pgUrl = z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL');

/** Every setting in one place, read from the environment once, with its default and its check. */
const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  // Loopback unless told otherwise: Cadenza speaks plain HTTP, so another machine should reach it
  // through a TLS reverse proxy, or by an explicit HOST=0.0.0.0 (docs/operations.md, listening).
  HOST: z.string().default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'DATABASE_URL must be a postgres:// URL')
    .optional(),
  /**
   * Each role's own PostgreSQL URL under least privilege (ops/role-database-url.ts): its database
   * user and, in the query, sslmode=verify-full, sslrootcert, sslcert and sslkey (docs/security.md
   * "Database connections"). Unset: DATABASE_URL.
   */
  CADENZA_DATABASE_URL_API: pgUrl.optional(),
  CADENZA_DATABASE_URL_SCHEDULER: pgUrl.optional(),
  CADENZA_DATABASE_URL_SENDER: pgUrl.optional(),
  CADENZA_DATABASE_URL_SYNC: pgUrl.optional(),
  CADENZA_DATA_DIR: z.string().default('./data'),
  CADENZA_ROLES: z.string().default('api,scheduler,sender,sync'),
  /**
   * How long a send whose answer was lost stays unknown before the Sent folder's verdict is final
   * (outbox unknownGraceMs; docs/architecture.md "Exactly once"); unset: 15 minutes, above the
   * providers' documented filing delays. Shorter only for tests.
   */
  CADENZA_UNKNOWN_GRACE_MS: z.coerce.number().int().min(0).optional(),
  /** How often a sender looks for its unknown sends in the Sent folder; unset: every minute. */
  CADENZA_SENDER_RESOLVE_EVERY_MS: z.coerce.number().int().min(100).optional(),
  /** The senders' mailbox lease (ops/leases.ts); unset: 60 s. Shorter only for tests. */
  CADENZA_SENDER_LEASE_TTL_MS: z.coerce.number().int().min(1000).optional(),
  /** Where recipients reach this installation (unsubscribe and tracking links); https in production. */
  CADENZA_PUBLIC_URL: z.string().url().optional(),
  /** The local rspamd the content check asks (docs/deliverability.md "Content check"), e.g. http://127.0.0.1:11333; unset: that address, "not installed" when nothing listens. */
  CADENZA_RSPAMD_URL: z.string().url().optional(),
  /** OAuth 2 clients for connecting Google and Microsoft mailboxes (docs/mailboxes.md); unset: that provider is off. */
  CADENZA_GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  CADENZA_GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  CADENZA_MICROSOFT_CLIENT_ID: z.string().min(1).optional(),
  CADENZA_MICROSOFT_CLIENT_SECRET: z.string().min(1).optional(),
  /** common (work and personal accounts), organizations, consumers, or one tenant's id. */
  CADENZA_MICROSOFT_TENANT: z.string().regex(/^[A-Za-z0-9.-]+$/, 'a tenant id, domain, common, organizations or consumers').default('common'),
  /** Google's issuer (https://accounts.google.com) replaced, read by discovery: the OAuth emulator in tests. */
  CADENZA_GOOGLE_ISSUER: z.string().url().optional(),
  /** Microsoft's login host (https://login.microsoftonline.com) replaced, read by discovery per tenant: the emulator in tests. */
  CADENZA_MICROSOFT_LOGIN_URL: z.string().url().optional(),
  /**
   * OAuth 2 apps for connecting CRMs from Settings → Integrations (docs/crm.md "Connecting"); a CRM
   * whose id and secret are both set shows "Connect with …"; unset, it is connected with a pasted
   * token. Secrets are never logged. The _OAUTH_URL / _LOGIN_URL replace the CRM's own hosts: its
   * emulator in tests.
   */
  CADENZA_HUBSPOT_CLIENT_ID: z.string().min(1).optional(),
  CADENZA_HUBSPOT_CLIENT_SECRET: z.string().min(1).optional(),
  /** Replaces both https://app.hubspot.com (the consent page) and https://api.hubapi.com (the token endpoint). */
  CADENZA_HUBSPOT_OAUTH_URL: z.string().url().optional(),
  CADENZA_SALESFORCE_CLIENT_ID: z.string().min(1).optional(),
  CADENZA_SALESFORCE_CLIENT_SECRET: z.string().min(1).optional(),
  /** Salesforce's login host (consent and code exchange); a sandbox's is https://test.salesforce.com. */
  CADENZA_SALESFORCE_LOGIN_URL: z.string().url().default('https://login.salesforce.com'),
  CADENZA_PIPEDRIVE_CLIENT_ID: z.string().min(1).optional(),
  CADENZA_PIPEDRIVE_CLIENT_SECRET: z.string().min(1).optional(),
  /** Replaces https://oauth.pipedrive.com (consent and token endpoint). */
  CADENZA_PIPEDRIVE_OAUTH_URL: z.string().url().optional(),
  /** The optional LLM rung of reply classification (docs/classification.md); unset: off. Never logged. */
  CADENZA_ANTHROPIC_API_KEY: z.string().min(1).optional(),
  /** The model the LLM rung asks; unset: claude-sonnet-4-5. */
  CADENZA_LLM_MODEL: z.string().min(1).optional(),
  /** Push for Gmail and Graph mailboxes (docs/mailboxes.md "Push"); unset: they are polled. At least 16 characters. Never logged. */
  CADENZA_PUSH_SECRET: z.string().min(16, 'at least 16 characters').optional(),
  /** The Pub/Sub topic Gmail's users.watch publishes to, projects/<project>/topics/<topic>. */
  CADENZA_GMAIL_PUBSUB_TOPIC: z.string().regex(/^projects\/[^/]+\/topics\/[^/]+$/, 'projects/<project>/topics/<topic>').optional(),
  /** Webhooks out may reach loopback and private addresses, over http too (docs/api.md "Webhooks"). */
  CADENZA_WEBHOOK_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  /**
   * Mailbox SMTP and IMAP hosts on private networks (RFC 1918, ULA, CGNAT) allowed: an internal
   * mail server (docs/security.md "Where Cadenza connects"). Loopback and link-local (cloud
   * metadata) stay refused. Read where connections are opened (mailbox/mail-hosts.ts).
   */
  CADENZA_MAIL_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  /** Mailbox hosts on loopback (127.0.0.0/8, ::1, localhost) allowed: the test mail bed, a relay on this machine. Off in production. */
  CADENZA_ALLOW_LOOPBACK_MAIL_HOSTS: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  /** The SMTP account Cadenza sends invitations from, smtp://user:pass@host:587 or smtps://…:465 (docs/api.md "Invitations"); unset: the API returns invitation links to copy. Never logged. */
  CADENZA_SMTP_URL: z.string().regex(/^smtps?:\/\/[^/]/, 'an smtp:// or smtps:// URL such as smtp://user:pass@mail.example.com:587').optional(),
  /** The From of those emails, e.g. "Cadenza <cadenza@example.com>"; unset: the SMTP user, when it is an address. */
  CADENZA_MAIL_FROM: z.string().min(3).optional(),
  /** This installation's name on its warmup federation card (docs/deliverability.md "Federation"); unset: the public URL's host. */
  CADENZA_FEDERATION_NAME: z.string().min(1).max(100).optional(),
  /** How often the scheduler role exchanges members, schedules and placement with each warmup peer, in ms (default 600000). */
  CADENZA_FEDERATION_EVERY_MS: z.coerce.number().int().min(10_000).max(86_400_000).optional(),
  /** GET /metrics answers only with `Authorization: Bearer <this>` (docs/security.md); unset: /metrics is public. At least 16 characters. Never logged. */
  CADENZA_METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  /**
   * A directory of this process's own for the click journal (docs/tracking.md): a click is answered
   * once it is on local disk and written to the database behind. Unset: <data dir>/click-journal on
   * the embedded store; on PostgreSQL none (each click committed to the database before its answer),
   * since several processes must not share one.
   */
  CADENZA_CLICK_JOURNAL_DIR: z.string().min(1).optional(),
  /**
   * PostgreSQL: named prepared statements kept per connection (store/prepared-statements.ts);
   * 0 sends every statement unnamed. Set 0 behind a pooler in transaction mode that does not
   * track protocol-level prepared statements (PgBouncer before 1.21, or 1.21+ without
   * max_prepared_statements): a statement prepared on one server connection is unknown on another.
   */
  CADENZA_PG_PREPARED_STATEMENTS: z.coerce.number().int().min(0).max(4096).default(256),
  /**
   * Which proxies' X-Forwarded-For to believe for the client's address (Fastify's trustProxy),
   * for deployments behind a reverse proxy (docs/security.md "Identity and access"): false (the
   * default: the TCP peer is the client), true (every hop; only when nothing reaches Cadenza but
   * the proxy), a number of hops, or comma-separated addresses or CIDRs of the proxies.
   */
  CADENZA_TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v, c) => {
      const t = v.trim();
      if (t === 'false' || t === '') return false;
      if (t === 'true') return true;
      if (/^\d+$/.test(t)) return Number(t);
      const list = t.split(',').map((s) => s.trim()).filter(Boolean);
      if (list.every((s) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(s))) return list;
      c.addIssue({ code: 'custom', message: 'true, false, a number of hops, or comma-separated proxy addresses or CIDRs such as 10.0.0.0/8' });
      return z.NEVER;
    }),
  /**
   * The DNS server every DNS check asks (domain health, the tracking host's CNAME, list hygiene),
   * as IP[:port] (unset: the system's resolvers). Domain health (docs/deliverability.md): `off` in CADENZA_DOMAIN_CHECKS stops the daily
   * re-check and the re-check button. The blocklist zones are comma-separated; unset: Spamhaus ZEN
   * (addresses) and DBL (domains), whose free use has terms (see the docs); empty: none.
   */
  CADENZA_DNS_RESOLVER: z
    .string()
    .optional()
    .superRefine((v, c) => {
      if (v === undefined) return;
      try {
        parseResolverAddress(v);
      } catch (e) {
        c.addIssue({ code: 'custom', message: (e as Error).message });
      }
    }),
  CADENZA_DOMAIN_CHECKS: z.enum(['on', 'off']).default('on'),
  CADENZA_DNSBL_IP_ZONES: z.string().optional(),
  CADENZA_DNSBL_DOMAIN_ZONES: z.string().optional(),
  /**
   * Custom tracking hosts with certificates issued on demand (docs/deliverability.md "Custom
   * tracking domains"): the HTTPS port they are served on (443 in production); unset: off.
   */
  CADENZA_TRACKING_HTTPS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** The address that port listens on; unset: HOST. */
  CADENZA_TRACKING_HTTPS_HOST: z.string().min(1).optional(),
  /** The name customers' tracking hosts are CNAMEs to; unset: the host of CADENZA_PUBLIC_URL. */
  CADENZA_PUBLIC_HOST: z.string().regex(/^[A-Za-z0-9.-]+$/, 'a host name such as track.cadenza.example.com').optional(),
  /** The ACME CA's directory; unset: Let's Encrypt's production directory. */
  CADENZA_ACME_DIRECTORY_URL: z.string().url().default('https://acme-v02.api.letsencrypt.org/directory'),
  /** A PEM file of a CA to trust for the directory's TLS besides the system's (a private CA); unset: the system's only. */
  CADENZA_ACME_CA_FILE: z.string().min(1).optional(),
  /** The ACME account's contact address (the CA's expiry notices). */
  CADENZA_ACME_EMAIL: z.string().email().optional(),
  /** List hygiene on imported and enrolled leads (docs/deliverability.md "List hygiene"); off: leads are not checked and keep no verdict. */
  CADENZA_LIST_HYGIENE: z.enum(['on', 'off']).default('on'),
  /**
   * The browser softphone (docs/dialer.md): the wss:// URL of Kamailio's WebSocket listener, the SIP
   * domain reps register in, and auth_ephemeral's shared secret. All three set: the dialer is on;
   * none: off (GET …/dialer/config answers enabled: false); some: a configuration error.
   */
  CADENZA_SIP_WS_URL: z.string().regex(/^wss?:\/\/[^/\s]+\/?[^\s]*$/, 'a wss:// URL such as wss://sip.example.com:8443').optional(),
  CADENZA_SIP_DOMAIN: z.string().regex(/^[A-Za-z0-9.-]+$/, 'a domain such as sip.example.com').optional(),
  CADENZA_SIP_SECRET: z.string().min(16, 'at least 16 characters').optional(),
  /** TURN and STUN URLs for browsers, comma-separated (turn:host:3478?transport=udp,turns:host:443?transport=tcp); and coturn's static-auth-secret. */
  CADENZA_TURN_URLS: z.string().regex(/^((turns?|stun):[^,\s]+)(,\s*(turns?|stun):[^,\s]+)*$/, 'turn:, turns: or stun: URLs separated by commas').optional(),
  CADENZA_TURN_SECRET: z.string().min(16, 'at least 16 characters').optional(),
  /** How long an issued SIP/TURN credential works, in seconds (default 8 h: a working day; the softphone asks for a new one before). */
  CADENZA_SIP_CREDENTIAL_TTL_S: z.coerce.number().int().min(300).max(7 * 86_400).default(28_800),
  /** rtpengine's recording-dir (its pcaps/ and metadata/): the API role ingests recorded calls from it and deletes what it took (src/dialer/recording/). */
  CADENZA_RECORDING_SPOOL: z.string().min(1).optional(),
  /** The consent announcement rtpengine plays on recorded calls (8 kHz WAV, Kamailio's RECORDING_ANNOUNCEMENT): mixed into each stored recording, which rtpengine's pcap lacks. */
  CADENZA_RECORDING_ANNOUNCEMENT: z.string().min(1).optional(),
  /**
   * Call transcription (docs/transcription.md): the folder of a streaming transducer (encoder,
   * decoder, joiner, tokens.txt) the API role loads at its start; absent: recordings are kept
   * untranscribed. The file names are needed only where the folder holds several candidates
   * (a release with fp32 and int8 files).
   */
  CADENZA_TRANSCRIPTION_MODEL: z.string().min(1).optional(),
  CADENZA_TRANSCRIPTION_ENCODER: z.string().min(1).optional(),
  CADENZA_TRANSCRIPTION_DECODER: z.string().min(1).optional(),
  CADENZA_TRANSCRIPTION_JOINER: z.string().min(1).optional(),
  /** Threads the speech model decodes with (one job at a time per process). */
  CADENZA_TRANSCRIPTION_THREADS: z.coerce.number().int().min(1).max(32).default(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.infer<typeof schema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const r = schema.safeParse(env);
  if (!r.success) {
    const problems = r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw cadenzaError('CONFIG_INVALID', `invalid configuration: ${problems.join('; ')}`, { problems });
  }
  return r.data;
}

export const ROLES = ['api', 'scheduler', 'sender', 'sync'] as const;
export type Role = (typeof ROLES)[number];

export function parseRoles(text: string): Role[] {
  const roles = text.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = roles.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (bad.length) throw cadenzaError('CONFIG_INVALID', `unknown role${bad.length > 1 ? 's' : ''}: ${bad.join(', ')} (known: ${ROLES.join(', ')})`);
  return roles as Role[];
}

/** The embedded database's folder inside the data folder (beside it: master.key). */
export function embeddedDbDir(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, '')}/db`;
}

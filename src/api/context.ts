import type { Clock } from '../common/clock.ts';
import type { DemoControl } from '../demo/control.ts';
import type { Random } from '../common/random.ts';
import type { OAuthClients } from '../mailbox/oauth/client.ts';
import type { MailboxTokens } from '../mailbox/oauth/mailbox-tokens.ts';
import type { Vault } from '../mailbox/vault.ts';
import type { ContentScorer } from '../sending/content-check/rspamd-scorer.ts';
import type { AskDeps, TaskSignals } from '../sending/credential-tasks/ask-task.ts';
import type { WaitLimits } from '../sending/credential-tasks/task-policy.ts';
import { EnrollmentService } from '../sequence/enrollment-service.ts';
import type { Store } from '../store/store.ts';
import type { CrmOAuthApps } from '../crm/oauth/apps.ts';
import type { HygieneChecker } from '../leads/hygiene/checker.ts';
import type { SystemMailer } from './system-mailer.ts';
import type { ErasureKey } from '../common/erasure-key.ts';
import type { LoginLimit } from './auth/login-limiter.ts';
import type { DomainHealthSettings } from '../sending/dns/domain-monitor.ts';
import type { FederationIdentity } from '../warmup/federation/identity.ts';
import type { SipCredentialSettings } from '../dialer/sip-credentials.ts';

/** What API handlers use; built once by the server and injected, never reached as a global. */
export interface ApiContext {
  store: Store;
  /** The world's time: the system's, or a demo's while one runs in this process (common/switchable-clock.ts). */
  clock: Clock;
  /** What runs in real time whatever a demo does (sessions, API keys, sign-in limits, invitations, webhooks out); absent: clock. */
  realClock?: Clock;
  random: Random;
  /** Seals mailbox passwords (src/mailbox/vault.ts); absent: routes that store a credential refuse. */
  vault?: Vault;
  /** The process's enrollment service, so the scheduler's timers hear of changes made through the API. */
  service?: EnrollmentService;
  /** Where people reach this installation; https makes the session cookie Secure. */
  publicUrl: string;
  /** Sessions last this long from sign-in. */
  sessionTtlMs: number;
  /** Sign-in limits: per address, per IP, per (address, client) back-off (src/api/auth/login-limiter.ts). */
  loginLimit: LoginLimit;
  /**
   * Enrollments were created or made due now (enroll, launch, resume, move): wakes the scheduler
   * and the dispatcher of every process at once instead of at their next poll (src/ops/work-nudge.ts).
   */
  workDue?: () => void;
  /**
   * A mailbox was connected, resumed or given new credentials: the sender and sync pools of every
   * process take its leases at once instead of at their next 20 s balance (src/ops/work-nudge.ts).
   */
  mailboxesChanged?: () => void;
  /** Webhooks out (src/api/webhooks): private destinations allowed, and the dispatcher to wake for a test event. */
  webhooks?: { allowPrivate: boolean; nudge?: () => void };
  /**
   * Testing a stored password and replying from the inbox open a mailbox credential, which only the
   * sender role does (least privilege): the routes write a credential task and wait for a sender's
   * answer (src/sending/credential-tasks/). `signals`: the work nudge that wakes the runners and
   * the "done" that ends the wait (app.ts); absent: the wait reads the task every few seconds.
   * `limits`: the waits (task-policy.ts defaultWaitLimits).
   */
  credentialTasks?: { signals?: TaskSignals; limits?: WaitLimits };
  /** Sends invitations (CADENZA_SMTP_URL); absent: the API returns each invitation's link for the admin to pass on. */
  mailer?: SystemMailer;
  /** Domain checks (resolver, blocklists, the tracking CNAME's target); absent: the re-check route refuses. */
  domains?: DomainHealthSettings;
  /**
   * The spam filter the content check asks (rspamd's /checkv2, CADENZA_RSPAMD_URL); absent: rspamd's
   * packaged address on this machine (127.0.0.1:11333), "not installed" when nothing listens there;
   * null: no scorer (Cadenza's own checks only).
   */
  contentScorer?: ContentScorer | null;
  /** Runs the first-run demo in this process (src/demo/control.ts); absent: the demo routes refuse. */
  demo?: DemoControl;
  /** Custom tracking hosts (src/tracking/domains): the name they must be a CNAME to, and a nudge for the job that verifies and issues; absent: the tracking-domain routes refuse. */
  trackingDomains?: {
    publicHost: string;
    nudge(): void;
    /** The HTTPS port custom hosts are served on (443 in production), once listening: an agency client's SSO redirect URI names it. */
    httpsPort?(): number | undefined;
  };
  /**
   * List hygiene (src/leads/hygiene/): checks imported leads and leads enrolled unchecked, on the
   * configured DNS server (CADENZA_DNS_RESOLVER). Absent: nothing is checked (leads keep no verdict).
   */
  hygiene?: HygieneChecker;
  /**
   * The erasure key (common/erasure-key.ts, derived from the master key): erasure writes an
   * address's keyed hash with it, and imports and new leads are checked against those hashes.
   * Absent: the erasure route refuses and erased addresses are not recognised.
   */
  erasure?: ErasureKey;
  /** The OAuth token cache: a removed mailbox's tokens are forgotten (src/sending/mailbox-removal.ts; its grant is revoked by the sender role). */
  oauth?: { clients: OAuthClients; tokens?: MailboxTokens };
  /** Warmup federation (src/warmup/federation/): this installation's identity; absent: the peer routes refuse. */
  federation?: { identity: FederationIdentity };
  /** The browser softphone (src/dialer/settings.ts): where it registers and the secrets its credentials are signed with; absent: off. */
  dialer?: SipCredentialSettings;
  /** The consent announcement's WAV (CADENZA_RECORDING_ANNOUNCEMENT), served to reps' browsers (GET …/dialer/announcement); absent: none. */
  consentAnnouncement?: Uint8Array;
  /** The CRMs' OAuth apps (src/crm/oauth/apps.ts, CADENZA_<CRM>_CLIENT_ID / _SECRET): "Connect with …" for each; absent: tokens only. */
  crmOAuth?: CrmOAuthApps;
  /** The CRM writer runs in this process (src/crm/writer.ts): wakes it after a connection changed; absent: it finds the change on its next round. */
  crm?: { nudge(): void };
  /** Call transcription runs in this process (src/dialer/transcribe/worker.ts): wakes its worker for a job queued again; absent: transcribing again is refused. */
  transcripts?: { nudge(): void };
}

export const defaultAuthSettings = {
  sessionTtlMs: 14 * 24 * 3_600_000,
  loginLimit: { perEmail: 10, perIp: 30, windowMs: 15 * 60_000 },
} as const;

/** The real-time clock of sessions, API keys, sign-in limits, invitations and webhooks out (never a demo's). */
export function realClock(ctx: ApiContext): Clock {
  return ctx.realClock ?? ctx.clock;
}

/** The process's enrollment service, or one of its own for a server built without the scheduler (tests). */
export function enrollmentService(ctx: ApiContext): EnrollmentService {
  return ctx.service ?? new EnrollmentService({ store: ctx.store, clock: ctx.clock, random: ctx.random });
}

/** What a route that needs a mailbox credential asks the sender role with (sending/credential-tasks/ask-task.ts). */
export function credentialAsk(ctx: ApiContext): AskDeps {
  const c = ctx.credentialTasks;
  // Real time: a wait for a sender is not stretched or squeezed by a demo's clock.
  return { db: ctx.store.db, clock: realClock(ctx), random: ctx.random, ...(c?.signals ? { signals: c.signals } : {}), ...(c?.limits ? { limits: c.limits } : {}) };
}

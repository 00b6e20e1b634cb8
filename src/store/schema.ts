import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable, Updateable } from 'kysely';

/** Kysely's view of the tables in migrations/. Keep in step with the SQL. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamp with a database default: optional on insert. */
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Json<T = Record<string, unknown>> = ColumnType<T, string | T, string | T>;
/** A jsonb column with a database default: optional on insert. */
type DefaultJson<T = Record<string, unknown>> = ColumnType<T, string | T | undefined, string | T>;

export interface WorkspaceTable {
  id: string;
  name: string;
  time_zone: Generated<string>;
  country: string | null;
  settings: DefaultJson;
  created_at: CreatedAt;
}

export interface AppUserTable {
  id: string;
  workspace_id: string;
  email: string;
  name: string | null;
  role: Generated<'owner' | 'admin' | 'member' | 'viewer'>;
  created_at: CreatedAt;
}

export interface MailboxTable {
  id: string;
  workspace_id: string;
  user_id: string | null;
  email: string;
  display_name: string | null;
  provider: 'smtp_imap' | 'gmail' | 'graph';
  /** null: the workspace's default (settings.mailboxCaps.dailyCap), else 30 (migration 0022). */
  daily_cap: number | null;
  /** null: the workspace's default, else none. */
  hourly_cap: number | null;
  /** null: the workspace's default, else none; {} is an explicit "no ramp". */
  ramp: ColumnType<Record<string, unknown> | null, string | Record<string, unknown> | null | undefined, string | Record<string, unknown> | null>;
  ramp_started_at: Timestamp | null;
  health: Generated<'ok' | 'warning' | 'paused' | 'error'>;
  health_reason: string | null;
  time_zone: string | null;
  settings: DefaultJson;
  created_at: CreatedAt;
}

export interface LeadTable {
  id: string;
  workspace_id: string;
  email: string;
  email_norm: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  title: string | null;
  phone: string | null;
  country: string | null;
  region: string | null;
  time_zone: string | null;
  custom: DefaultJson<Record<string, string>>;
  created_at: CreatedAt;
  updated_at: DefaultTimestamp;
  /** Generated (migration 0011): lower-cased email, name and company for the trigram search. */
  search_text: GeneratedAlways<string>;
  /** List hygiene (migration 0030, src/leads/hygiene/): null until checked. */
  hygiene_verdict: 'valid' | 'risky' | 'invalid' | null;
  hygiene_reasons: DefaultJson<Array<{ code: string; message: string }>>;
  hygiene_checked_at: Timestamp | null;
  hygiene_review: 'approved' | 'rejected' | null;
  hygiene_reviewed_at: Timestamp | null;
  hygiene_reviewed_by: string | null;
  /** Migration 0048 (src/leads/phone.ts): `phone` in E.164, and its verdict; all null without a number. */
  phone_e164: string | null;
  phone_status: 'valid' | 'flagged' | null;
  phone_reason: string | null;
}

export interface SequenceTable {
  id: string;
  workspace_id: string;
  key: string;
  name: string;
  status: Generated<'draft' | 'active' | 'paused' | 'archived'>;
  send_window: Json<unknown>;
  stop_rules: DefaultJson<unknown>;
  settings: DefaultJson<unknown>;
  version: Generated<number>;
  created_at: CreatedAt;
  updated_at: DefaultTimestamp;
}

export interface SequenceMailboxTable {
  sequence_id: string;
  mailbox_id: string;
}

export type StepKind = 'email' | 'call' | 'manual' | 'wait' | 'branch';
export type DelayUnit = 'minutes' | 'hours' | 'days' | 'business_days';

export interface StepTable {
  id: string;
  sequence_id: string;
  key: string;
  position: number;
  kind: StepKind;
  delay_amount: Generated<number>;
  delay_unit: Generated<DelayUnit>;
  config: DefaultJson<unknown>;
  archived_at: Timestamp | null;
  created_at: CreatedAt;
}

export interface VariantTable {
  id: string;
  step_id: string;
  key: string;
  subject: string | null;
  body: string;
  weight: Generated<number>;
  archived_at: Timestamp | null;
  created_at: CreatedAt;
}

/** 0058_experiment_winner.sql: an experiment's declared winner (src/sequence/auto-winner.ts). */
export interface ExperimentWinnerTable {
  step_id: string;
  variant_id: string;
  declared_at: Timestamp;
  p_value: number;
  reason: string;
}

/** 0112_sequence_experiment_winner.sql: a sequence experiment's declared winner (src/sequence/auto-winner.ts). */
export interface SequenceExperimentWinnerTable {
  sequence_id: string;
  experiment_key: string;
  arm_key: string;
  declared_at: Timestamp;
  p_value: number;
  reason: string;
}

export type EnrollmentStateName =
  | 'active'
  | 'paused'
  | 'replied'
  | 'bounced'
  | 'unsubscribed'
  | 'finished'
  | 'stopped'
  | 'failed'
  | 'moved';

export interface EnrollmentTable {
  id: string;
  workspace_id: string;
  sequence_id: string;
  lead_id: string;
  mailbox_id: string | null;
  state: EnrollmentStateName;
  state_reason: string | null;
  waiting_for: 'timer' | 'send' | 'task' | null;
  next_step_id: string | null;
  last_step_id: string | null;
  last_step_at: Timestamp | null;
  done_step_ids: Generated<string[]>;
  due_at: Timestamp | null;
  paused_due_at: Timestamp | null;
  time_zone: string;
  zone_source: string;
  soft_bounces: Generated<number>;
  version: Generated<number>;
  /** When state = 'moved': the enrollment that replaced this one (migration 0017). */
  moved_to: Generated<string | null>;
  /** Migration 0061: the arm chosen at each branch step passed, by branch step id (sequence/model.ts NO_ARM: none matched). */
  branch_choices: DefaultJson<Record<string, string>>;
  /** Migration 0075: the arm of each sequence experiment, by experiment key, fixed at enrollment (sequence/arm-view.ts). */
  experiment_arms: DefaultJson<Record<string, string>>;
  created_at: CreatedAt;
  updated_at: DefaultTimestamp;
}

export type SendRequestState = 'queued' | 'in_flight' | 'sent' | 'failed' | 'cancelled' | 'unknown' | 'possibly_sent';

export interface SendRequestTable {
  id: string;
  workspace_id: string;
  enrollment_id: string;
  step_id: string;
  mailbox_id: string | null;
  variant_id: string | null;
  state: Generated<SendRequestState>;
  due_at: Timestamp;
  message_id: string | null;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: CreatedAt;
  updated_at: DefaultTimestamp;
}

export interface MessageTable {
  id: string;
  workspace_id: string;
  mailbox_id: string | null;
  enrollment_id: string | null;
  send_request_id: string | null;
  direction: 'outbound' | 'inbound';
  message_id: string;
  in_reply_to: string | null;
  refs: Generated<string[]>;
  thread_id: string | null;
  subject: string | null;
  from_addr: string | null;
  to_addrs: Generated<string[]>;
  at: Timestamp;
  created_at: CreatedAt;
}

export interface TaskTable {
  id: string;
  workspace_id: string;
  enrollment_id: string;
  step_id: string;
  kind: 'call' | 'manual';
  state: Generated<'open' | 'done' | 'skipped' | 'cancelled'>;
  title: string;
  notes: string | null;
  outcome: string | null;
  due_at: Timestamp;
  completed_at: Timestamp | null;
  created_at: CreatedAt;
  /** Calls logged on a call task (migration 0049): the step's retry rule counts tries by it. */
  attempts: Generated<number>;
}

export type PhoneCallState = 'dialing' | 'ringing' | 'answered' | 'ended';
export type PhoneCallOutcome = 'connected' | 'voicemail' | 'no_answer' | 'busy' | 'wrong_number' | 'meeting_booked' | 'not_interested' | 'dropped';

/** A workspace's connection to a CRM (migration 0054, src/crm/). */
export interface CrmConnectionTable {
  id: string;
  workspace_id: string;
  kind: 'hubspot' | 'salesforce' | 'pipedrive' | 'twenty';
  base_url: string;
  credentials: Buffer;
  activities: Generated<string[]>;
  state: Generated<'active' | 'paused'>;
  paused_reason: string | null;
  prepared_at: Timestamp | null;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  created_at: CreatedAt;
  /** Changes in (migration 0055, src/crm/change-reader.ts): the reader's resume position, stored with what it covers. */
  change_cursor: string | null;
  change_cursor_at: Timestamp | null;
  last_change_at: Timestamp | null;
  read_error: string | null;
  /** Overrides of DEFAULT_FIELD_OWNERS (src/crm/field-ownership.ts). */
  field_owners: DefaultJson<Record<string, 'crm' | 'cadenza'>>;
  /** Overrides of the stop rules' defaults (src/crm/stop-rules.ts). */
  stop_rules: DefaultJson<Record<string, unknown>>;
  integration_user_id: string | null;
  /** The CRM's request window as the writer last stored it (migration 0057): [[time ms, requests], …]. */
  request_window: Json<Array<[number, number]>> | null;
  /** Webhooks as triggers (migration 0060, src/crm/webhooks/): the sealed secret deliveries are verified with. */
  hook_secret: Buffer | null;
  /** The ids of the webhooks Cadenza registered with the CRM (Pipedrive). */
  hook_ids: Json<string[]> | null;
  hooks_registered_at: Timestamp | null;
  hook_error: string | null;
  /** The last verified delivery: while recent, the connection is read on the reconcile interval. */
  hook_verified_at: Timestamp | null;
  /** Bumped by each verified delivery; a sync loop that sees it move reads the connection. */
  wake_seq: Generated<number>;
}

/** The mirror of a CRM contact (migration 0055, src/crm/change-reader.ts). */
export interface CrmContactTable {
  connection_id: string;
  crm_id: string;
  workspace_id: string;
  email: string | null;
  lead_id: string | null;
  fields: Json<Record<string, unknown>>;
  updated_at: Timestamp;
  updated_by: string | null;
  cadenza_written: DefaultJson<Record<string, string | null>>;
  cadenza_pending: Json<Record<string, string | null>> | null;
  read_at: DefaultTimestamp;
}

/** The mirror of a CRM deal (migration 0055). */
export interface CrmDealTable {
  connection_id: string;
  crm_id: string;
  workspace_id: string;
  name: string;
  stage: string;
  contact_emails: Generated<string[]>;
  owner_email: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  read_at: DefaultTimestamp;
}

/** A CRM-side edit of a Cadenza-owned field, logged and not applied (migration 0055). */
export interface CrmConflictTable {
  id: Generated<number>;
  connection_id: string;
  workspace_id: string;
  crm_id: string;
  email: string | null;
  field: string;
  crm_value: string | null;
  cadenza_value: string | null;
  crm_updated_at: Timestamp;
  crm_updated_by: string | null;
  at: DefaultTimestamp;
}

/** A CRM list enrolled in a sequence, once or continuously (migration 0055, src/crm/list-enroll.ts). */
export interface CrmListEnrollmentTable {
  id: string;
  connection_id: string;
  workspace_id: string;
  list_id: string;
  list_name: string;
  sequence_id: string;
  mode: 'once' | 'continuous';
  state: Generated<'active' | 'done' | 'stopped'>;
  next_page: string | null;
  enrolled: Generated<number>;
  refused: Generated<number>;
  last_run_at: Timestamp | null;
  last_error: string | null;
  created_by: string | null;
  created_at: CreatedAt;
}

/** A list member a list enrollment handled, once (migration 0055). */
export interface CrmListMemberTable {
  list_enrollment_id: string;
  crm_id: string;
  lead_id: string | null;
  outcome: string;
  at: DefaultTimestamp;
}

/** One fact to write to one CRM connection, once (migration 0054, src/crm/outbox.ts). */
export interface CrmActivityTable {
  id: Generated<number>;
  connection_id: string;
  workspace_id: string;
  external_id: string;
  kind: string;
  lead_id: string | null;
  email: string;
  payload: DefaultJson<unknown>;
  occurred_at: Timestamp;
  state: Generated<'pending' | 'written' | 'skipped' | 'rejected'>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  crm_id: string | null;
  last_error: string | null;
  written_at: Timestamp | null;
  created_at: CreatedAt;
}

/** The rep's number on the SIP trunk (migration 0053, src/dialer/rep-number.ts): caller ID out, DID in. */
export interface AppUserTable {
  phone_number: Generated<string | null>;
}

/** One call a rep placed or took (migration 0049, src/dialer/). */
export interface PhoneCallTable {
  id: string;
  workspace_id: string;
  lead_id: string | null;
  task_id: string | null;
  enrollment_id: string | null;
  placed_by: string | null;
  direction: 'outbound' | 'inbound';
  source: 'dialer' | 'logged';
  remote_e164: string | null;
  state: Generated<PhoneCallState>;
  outcome: PhoneCallOutcome | null;
  suggested: 'connected' | 'no_answer' | 'busy' | 'dropped' | null;
  notes: string | null;
  sip_call_id: string | null;
  end_cause: string | null;
  attempt: Generated<number>;
  ringing_at: Timestamp | null;
  answered_at: Timestamp | null;
  ended_at: Timestamp | null;
  duration_ms: number | null;
  outcome_at: Timestamp | null;
  seen_at: DefaultTimestamp;
  created_at: CreatedAt;
}

/** A call's recording (migration 0050, src/dialer/recording/): the 2-channel WAV, sealed with the workspace's data key. */
export interface PhoneCallRecordingTable {
  call_id: string;
  workspace_id: string;
  sealed: Buffer;
  duration_ms: number;
  bytes: number;
  announced: boolean;
  created_at: CreatedAt;
}

/** A recorded call's transcription job and result (migration 0052, src/dialer/transcribe/queue.ts). */
export interface CallTranscriptTable {
  call_id: string;
  workspace_id: string;
  state: Generated<'pending' | 'running' | 'done' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  lease_owner: string | null;
  lease_until: Date | null;
  transcript: Buffer | null;
  model: string | null;
  word_count: number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
}

/** A capture the recording ingester could not store (migration 0050): why, never the audio. */
export interface CallCaptureQuarantineTable {
  id: Generated<number>;
  sip_call_id: string;
  workspace_id: string | null;
  call_id: string | null;
  reason: string;
  message: string;
  at: Timestamp;
}

export interface EventTable {
  id: Generated<number>;
  workspace_id: string;
  enrollment_id: string | null;
  type: string;
  payload: DefaultJson<unknown>;
  at: Timestamp;
}

/** 'erased': the row's email_norm is a keyed hash of an erased person's address (migration 0042, src/privacy/). */
export type SuppressionReason = 'hard_bounce' | 'unsubscribe' | 'complaint' | 'manual' | 'erased';

export interface SuppressionTable {
  workspace_id: string;
  email_norm: string;
  reason: SuppressionReason;
  source: string | null;
  created_at: CreatedAt;
}

// --- credential vault (0004_vault.sql)
export interface WorkspaceKeyTable {
  workspace_id: string;
  wrapped_key: Buffer;
  master_fingerprint: string;
  created_at: CreatedAt;
  rotated_at: Timestamp | null;
}

export interface MailboxCredentialTable {
  mailbox_id: string;
  kind: 'password' | 'oauth';
  ciphertext: Buffer;
  updated_at: DefaultTimestamp;
}
// --- end credential vault

// --- tracking (migrations/0003_tracking.sql; owned by src/tracking/)
export type TrackingVerdict = 'human' | 'proxy' | 'scanner' | 'unknown';

export interface TrackingEventTable {
  id: Generated<number>;
  workspace_id: string;
  send_request_id: string | null;
  enrollment_id: string | null;
  kind: 'open' | 'click' | 'unsubscribe';
  url: string | null;
  link_index: number | null;
  method: string | null;
  user_agent: string | null;
  ip: string | null;
  delay_ms: number | null;
  verdict: TrackingVerdict | null;
  confidence: number | null;
  reason: string | null;
  at: Timestamp;
}
// --- end tracking

// --- pacing and dispatch (migrations/0002_pacing.sql; owned by src/mailbox/pacing and src/sending/dispatch)
// Declaration merging adds the new columns to the tables above without editing them.
export interface SendRequestTable {
  /** Planned send instant (null: not planned yet). */
  send_at: Timestamp | null;
  /** When the dispatcher last decided it; with send_at null: planned, no slot (plan_note says why). */
  planned_at: Timestamp | null;
  plan_note: string | null;
  /** Set at claim; counts against the budgets while the state is in_flight, sent, unknown or failed. */
  claimed_at: Timestamp | null;
  bounced_at: Timestamp | null;
  bounce_kind: 'hard' | 'soft' | null;
}

// --- exactly once (migrations/0019_possibly_sent.sql; owned by src/sending/outbox.ts)
export interface SendRequestTable {
  /** The Sent-folder rule the request was handed over under (transport.ts SentProof); null: claimed before 0019, no proof. */
  proof: 'copy_first' | 'provider_copy' | null;
  /** A resend of a possibly-sent step asked for by hand: recording it does not advance the enrollment. */
  manual_resend: Generated<boolean>;
}

export interface SequenceTable {
  /** Sends a day across the sequence's mailboxes, in the workspace's local day; null: no cap. */
  daily_cap: number | null;
}

export interface WorkspaceTable {
  /** Sends a day across the workspace's mailboxes, in its local day; null: no cap. */
  daily_cap: number | null;
}

export interface MailboxPlanTable {
  mailbox_id: string;
  planned_at: Timestamp;
  replan_at: Timestamp | null;
  planned: Generated<number>;
  unplaced: Generated<number>;
}

export interface Database {
  mailbox_plan: MailboxPlanTable;
}
// --- end pacing and dispatch

// --- leases (0005_leases.sql)
export interface LeaseTable {
  resource: string;
  owner: string;
  token: number;
  expires_at: Timestamp;
  acquired_at: Timestamp;
  renewed_at: Timestamp;
}

// --- membership (0020_member.sql)
export interface MemberTable {
  id: string;
  role: string;
  host: string;
  pid: number;
  boot_id: string | null;
  pid_ns: string | null;
  start_ticks: number | string | null;
  joined_at: Timestamp;
  heartbeat_at: Timestamp;
}
// --- end leases and membership

// --- ingestion (0006_ingest.sql; owned by src/ingest)
export interface MailboxSyncTable {
  mailbox_id: string;
  cursor: unknown | null;
  updated_at: Timestamp;
  last_error: string | null;
  last_error_at: Timestamp | null;
  resyncs: Generated<number>;
  fence_token: number | null;
}

export interface MessageTable {
  folder: 'inbox' | 'junk' | 'sent' | 'other' | null;
  provider_key: string | null;
  received_at: Timestamp | null;
  /** Reply-to-stop of this message's signal, in real ms (migration 0029); null when it stopped nothing. */
  stop_latency_ms: number | null;
  label: string | null;
  confidence: number | null;
  reason: string | null;
  rung: string | null;
  intent: string | null;
  intent_confidence: number | null;
  bounce: unknown | null;
  return_at: Timestamp | null;
  thread_via: string | null;
  action: string | null;
  new_text: string | null;
  excerpt: string | null;
  needs_review: Generated<boolean>;
  reviewed_at: Timestamp | null;
  /** 0012: Reply-To and Cc addresses of an inbound message (src/sending/reply-recipients.ts). */
  reply_to: Generated<string[]>;
  cc_addrs: Generated<string[]>;
}

export interface QuarantineTable {
  id: string;
  workspace_id: string;
  mailbox_id: string | null;
  provider_key: string;
  folder: string | null;
  reason: string;
  raw: Buffer | null;
  raw_size: number | null;
  at: Timestamp;
  resolved_at: Timestamp | null;
}

export interface Database {
  mailbox_sync: MailboxSyncTable;
  quarantine: QuarantineTable;
}
// --- end ingestion

// --- oauth flows (0007_oauth.sql; owned by src/mailbox/oauth)
export interface OAuthFlowTable {
  state: string;
  workspace_id: string;
  /** A mailbox provider, or a CRM's kind (0059_crm_oauth.sql). */
  provider: 'google' | 'microsoft' | 'hubspot' | 'salesforce' | 'pipedrive' | 'sso';
  /** 'crm' for a CRM connect flow; 'sso' for a single sign-on (0095_sso.sql). */
  mode: 'api' | 'imap' | 'crm' | 'sso';
  redirect_uri: string;
  code_verifier: string;
  /** Null for a CRM flow (no ID token to bind). */
  nonce: string | null;
  login_hint: string | null;
  /** A CRM flow's API address, when the token answer names none (0059). */
  base_url: string | null;
  created_at: CreatedAt;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface Database {
  oauth_flow: OAuthFlowTable;
}
// --- end oauth flows

export interface SchemaMigrationTable {
  version: number;
  name: string;
  applied_at: DefaultTimestamp;
}

export interface Database {
  schema_migration: SchemaMigrationTable;
  workspace_key: WorkspaceKeyTable;
  lease: LeaseTable;
  member: MemberTable;
  mailbox_credential: MailboxCredentialTable;
  workspace: WorkspaceTable;
  app_user: AppUserTable;
  mailbox: MailboxTable;
  lead: LeadTable;
  sequence: SequenceTable;
  sequence_mailbox: SequenceMailboxTable;
  step: StepTable;
  variant: VariantTable;
  experiment_winner: ExperimentWinnerTable;
  sequence_experiment_winner: SequenceExperimentWinnerTable;
  enrollment: EnrollmentTable;
  send_request: SendRequestTable;
  message: MessageTable;
  task: TaskTable;
  phone_call: PhoneCallTable;
  crm_connection: CrmConnectionTable;
  crm_activity: CrmActivityTable;
  crm_contact: CrmContactTable;
  crm_deal: CrmDealTable;
  crm_conflict: CrmConflictTable;
  crm_list_enrollment: CrmListEnrollmentTable;
  crm_list_member: CrmListMemberTable;
  phone_call_recording: PhoneCallRecordingTable;
  call_capture_quarantine: CallCaptureQuarantineTable;
  call_transcript: CallTranscriptTable;
  event: EventTable;
  suppression: SuppressionTable;
  tracking_event: TrackingEventTable;
}

export type EnrollmentRow = Selectable<EnrollmentTable>;
export type StepRow = Selectable<StepTable>;
export type SequenceRow = Selectable<SequenceTable>;
export type LeadRow = Selectable<LeadTable>;
export type VariantRow = Selectable<VariantTable>;
export type ExperimentWinnerRow = Selectable<ExperimentWinnerTable>;
export type SequenceExperimentWinnerRow = Selectable<SequenceExperimentWinnerTable>;
export type NewLead = Insertable<LeadTable>;
export type EnrollmentUpdate = Updateable<EnrollmentTable>;

// --- auth (0008_auth.sql; owned by src/api)
export interface AccountTable {
  id: string;
  email: string;
  name: string | null;
  password_hash: string;
  created_at: CreatedAt;
}

export interface AppUserTable {
  account_id: string | null;
  inbox_scope: Generated<'own' | 'all'>;
}

export interface AuthSessionTable {
  id_hash: string;
  account_id: string;
  csrf_token: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

export interface ApiKeyTable {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  role: 'admin' | 'member';
  /** Only safe requests (GET, HEAD) (0137). */
  read_only: Generated<boolean>;
  created_by: string | null;
  /** The creator as it read at creation (0023). */
  created_by_label: string | null;
  created_at: CreatedAt;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface LoginFailureTable {
  email_norm: string;
  at: Timestamp;
  /** device:<hash> or ip:<address> (0023). */
  client: Generated<string>;
}

// 0023_identity.sql
export interface SetupTokenTable {
  token_hash: string;
  created_at: CreatedAt;
}

export interface AccountDeviceTable {
  token_hash: string;
  account_id: string;
  created_at: CreatedAt;
  last_seen_at: DefaultTimestamp;
}

// 0024_audit_log.sql (owned by src/api/audit)
export interface AuditEventTable {
  id: string;
  workspace_id: string;
  at: Timestamp;
  action: string;
  actor_kind: 'session' | 'api_key' | 'system' | 'anonymous';
  actor_user_id: string | null;
  actor_key_id: string | null;
  actor_label: string;
  target: string | null;
  ip: string | null;
  detail: DefaultJson;
}

export interface Database {
  account: AccountTable;
  auth_session: AuthSessionTable;
  api_key: ApiKeyTable;
  login_failure: LoginFailureTable;
  setup_token: SetupTokenTable;
  account_device: AccountDeviceTable;
  audit_event: AuditEventTable;
}
// --- end auth

// --- webhooks (migrations/0009_webhooks.sql; owned by src/api/webhooks)
export interface WebhookEndpointTable {
  id: string;
  workspace_id: string;
  url: string;
  events: string[];
  /** Only until sealLegacyWebhookSecrets has run (0013): a secret from before secrets were sealed. */
  legacy_secret: string | null;
  /** The HMAC key, sealed with the workspace's data key (src/api/webhooks/secrets.ts). */
  secret_sealed: Buffer | null;
  previous_secret_sealed: Buffer | null;
  previous_secret_expires_at: Timestamp | null;
  secret_rotated_at: Timestamp | null;
  description: string | null;
  created_at: CreatedAt;
  disabled_at: Timestamp | null;
}

export interface WebhookDeliveryTable {
  id: Generated<number>;
  endpoint_id: string;
  workspace_id: string;
  event_id: string;
  event_type: string;
  payload: Json<unknown>;
  state: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  last_attempt_at: Timestamp | null;
  response_code: number | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
  created_at: CreatedAt;
}

export interface Database {
  webhook_endpoint: WebhookEndpointTable;
  webhook_delivery: WebhookDeliveryTable;
}
// --- end webhooks

// --- inbox replies (0012_inbox_reply.sql; owned by src/sending/reply.ts)
export interface ReplyRequestTable {
  workspace_id: string;
  idempotency_key: string;
  inbound_id: string;
  request_hash: string;
  message_id: string;
  state: 'sending' | 'sent' | 'unconfirmed' | 'failed';
  result: unknown | null;
  last_error: string | null;
  created_at: CreatedAt;
  updated_at: DefaultTimestamp;
}

export interface Database {
  reply_request: ReplyRequestTable;
}
// --- end inbox replies

// --- credential tasks (0046_credential_task.sql; owned by src/sending/credential-tasks/)
export type CredentialTaskKind = 'test' | 'reply' | 'revoke';
export type CredentialTaskState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
export interface CredentialTaskTable {
  id: string;
  workspace_id: string;
  mailbox_id: string;
  kind: CredentialTaskKind;
  input: DefaultJson;
  sealed: Buffer | null;
  state: ColumnType<CredentialTaskState, CredentialTaskState | undefined, CredentialTaskState>;
  result: unknown | null;
  attempts: ColumnType<number, number | undefined, number>;
  run_after: DefaultTimestamp;
  claimed_until: Timestamp | null;
  created_at: CreatedAt;
  updated_at: DefaultTimestamp;
}

export interface Database {
  credential_task: CredentialTaskTable;
}
// --- end credential tasks

// --- invitations (migrations/0014_invitations.sql; owned by src/api/auth/invitations.ts)
export interface InvitationTable {
  id: string;
  workspace_id: string;
  email: string;
  role: 'owner' | 'admin' | 'member' | 'viewer';
  token_hash: string;
  invited_by: string | null;
  created_at: CreatedAt;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  accepted_by: string | null;
  revoked_at: Timestamp | null;
}

export interface Database {
  invitation: InvitationTable;
}
// --- end invitations

// --- mailbox removal (migrations/0016_mailbox_removal.sql; owned by src/sending/mailbox-removal.ts)
export interface MailboxTable {
  removed_at: Timestamp | null;
  removed_by: string | null;
}
export interface OAuthFlowTable {
  user_id: string | null;
  /** SHA-256 of the web session that started the flow (auth_session.id_hash). */
  session_hash: string | null;
}
// --- end mailbox removal

// --- lead imports (migrations/0015_lead_import.sql; owned by src/leads/import-job.ts)
export type LeadImportStatus = 'running' | 'done' | 'failed' | 'cancelled';
export interface LeadImportTable {
  id: string;
  workspace_id: string;
  created_by: string | null;
  file_name: string | null;
  status: Generated<LeadImportStatus>;
  on_duplicate: 'skip' | 'update';
  mapping: DefaultJson<Record<string, string>>;
  encoding_requested: Generated<string>;
  encoding: string | null;
  delimiter: string | null;
  headers: Json<string[]> | null;
  bom: Generated<boolean>;
  total_bytes: ColumnType<string | number | null, number | null | undefined, number | null>;
  bytes_read: ColumnType<string | number, number | undefined, number>;
  rows_read: Generated<number>;
  inserted: Generated<number>;
  updated: Generated<number>;
  unchanged: Generated<number>;
  rejected: Generated<number>;
  warnings: Generated<number>;
  rejects_by_reason: DefaultJson<Record<string, number>>;
  /** Migration 0028. */
  warnings_by_reason: DefaultJson<Record<string, number>>;
  error: string | null;
  created_at: CreatedAt;
  updated_at: DefaultTimestamp;
  finished_at: Timestamp | null;
  /** Migration 0018: the sequence the written leads are enrolled in, batch by batch. */
  enroll_sequence_id: string | null;
  enrolled: Generated<number>;
  enroll_skipped: Generated<number>;
  enroll_skipped_by_reason: DefaultJson<Record<string, number>>;
  /** Migration 0030: the written leads by hygiene verdict. */
  hygiene_valid: Generated<number>;
  hygiene_risky: Generated<number>;
  hygiene_invalid: Generated<number>;
  /** Migration 0048: the written leads whose number was flagged, and their count per reason code. */
  phones_flagged: Generated<number>;
  phones_flagged_by_reason: DefaultJson<Record<string, number>>;
}

export interface LeadImportRejectTable {
  import_id: string;
  workspace_id: string;
  line: number;
  reason: string;
  message: string;
  fields: Json<string[]> | null;
  raw: string | null;
}

export interface Database {
  lead_import: LeadImportTable;
  lead_import_reject: LeadImportRejectTable;
}
// --- end lead imports

// --- domain health (0031_domain_health.sql; owned by src/sending/dns)
export interface DomainHealthTable {
  workspace_id: string;
  domain: string;
  purpose: 'sending' | 'tracking';
  verdict: 'ok' | 'broken' | 'unknown';
  /** The last verdict that said something: ok or broken (null before one). */
  status: 'ok' | 'broken' | null;
  checks: Json<unknown[]>;
  checked_at: Timestamp;
  changed_at: Timestamp | null;
}

export interface DomainHealthChangeTable {
  id: Generated<number>;
  workspace_id: string;
  domain: string;
  purpose: 'sending' | 'tracking';
  from_status: 'ok' | 'broken' | null;
  to_status: 'ok' | 'broken';
  failing: DefaultJson<unknown[]>;
  at: Timestamp;
  seen_at: Timestamp | null;
}

export interface Database {
  domain_health: DomainHealthTable;
  domain_health_change: DomainHealthChangeTable;
}
// --- end domain health
// --- warmup network (migrations/0032_warmup.sql; owned by src/warmup/)
export interface WarmupMemberTable {
  mailbox_id: string;
  workspace_id: string;
  pool: Generated<string>;
  target: Generated<number>;
  joined_at: Timestamp;
  cap_factor: Generated<number>;
  cap_reason: string | null;
}
export interface WarmupMailTable {
  id: string;
  pool: string;
  kind: 'first' | 'reply';
  message_id: string;
  in_reply_to: string | null;
  sender_mailbox_id: string | null;
  sender_address: string;
  receiver_mailbox_id: string | null;
  receiver_address: string;
  planned_at: Timestamp;
  sent_at: Timestamp | null;
  received_at: Timestamp | null;
  received_folder: 'inbox' | 'junk' | null;
  rescued_at: Timestamp | null;
  replied_at: Timestamp | null;
  // 0036_warmup_send.sql
  claimed_at: Timestamp | null;
  send_note: string | null;
  reply_subject: string | null;
  reply_to_name: string | null;
  language: 'en' | 'de' | 'fr' | 'es' | null;
  // 0038_warmup_federation.sql
  peer_id: string | null;
  peer_accepted_at: Timestamp | null;
  reported_at: Timestamp | null;
}
// 0036_warmup_send.sql
export interface WarmupPlanDayTable {
  pool: string;
  day: string;
  planned_at: Timestamp;
  sends: number;
  shortfall: Generated<unknown>;
}
/** Migration 0042: a UTC day the privacy purge completed (src/privacy/purge-role.ts). */
export interface PrivacyPurgeDayTable {
  day: string;
  started_at: Timestamp;
  finished_at: Timestamp;
  counts: Generated<unknown>;
  /** Migration 0047: the counts by workspace id; null on days purged before it. */
  workspace_counts: unknown | null;
}
export interface Database {
  privacy_purge_day: PrivacyPurgeDayTable;
  warmup_member: WarmupMemberTable;
  warmup_mail: WarmupMailTable;
  warmup_plan_day: WarmupPlanDayTable;
  warmup_peer: WarmupPeerTable;
  warmup_remote_member: WarmupRemoteMemberTable;
  warmup_peer_nonce: WarmupPeerNonceTable;
}
// 0038_warmup_federation.sql
export interface WarmupPeerTable {
  id: string;
  workspace_id: string;
  pool: Generated<string>;
  name: string;
  url: string;
  sign_key: string;
  agree_key: string;
  state: 'pending' | 'active' | 'left';
  added_at: Timestamp;
  activated_at: Timestamp | null;
  left_at: Timestamp | null;
  left_by: 'us' | 'peer' | null;
  exchanged_at: Timestamp | null;
  failures: Generated<number>;
  retry_at: Timestamp | null;
  last_error: string | null;
}
export interface WarmupRemoteMemberTable {
  peer_id: string;
  address: string;
  provider: string;
  domain: string;
  time_zone: string;
  day_start: string;
  day_end: string;
  capacity: number;
  updated_at: Timestamp;
}
export interface WarmupPeerNonceTable {
  peer_id: string;
  nonce: string;
  seen_at: Timestamp;
}
// --- end warmup network

/** A rep's recorded voicemail message, sealed (migration 0051, src/dialer/voicemail.ts). */
export interface RepVoicemailTable {
  user_id: string;
  workspace_id: string;
  audio: Buffer;
  mime_type: string;
  duration_ms: number;
  bytes: number;
  updated_at: DefaultTimestamp;
}

export interface Database {
  rep_voicemail: RepVoicemailTable;
}

// --- unified inbox (0086_unified_inbox.sql; owned by src/inbox)
export interface MessageTable {
  /** The reply as HTML, cut at ingest; shown only through src/inbox/reply-html.ts. */
  body_html: string | null;
}

export interface InboxStateTable {
  message_id: string;
  workspace_id: string;
  assignee_user_id: string | null;
  snoozed_until: Timestamp | null;
  done_at: Timestamp | null;
  updated_at: DefaultTimestamp;
}

export interface InboxReadTable {
  message_id: string;
  user_id: string;
  read_at: Timestamp;
}

export type InboxLabelColor = 'gray' | 'blue' | 'green' | 'amber' | 'red' | 'purple';

export interface InboxLabelTable {
  id: string;
  workspace_id: string;
  name: string;
  color: Generated<InboxLabelColor>;
  created_at: CreatedAt;
}

export interface InboxMessageLabelTable {
  message_id: string;
  label_id: string;
  added_by: string | null;
  added_at: Timestamp;
}

export interface InboxNoteTable {
  id: string;
  workspace_id: string;
  message_id: string;
  author_user_id: string | null;
  body: string;
  created_at: Timestamp;
}

export interface InboxViewTable {
  id: string;
  workspace_id: string;
  user_id: string;
  name: string;
  filters: Json<unknown>;
  created_at: Timestamp;
}

export interface Database {
  inbox_state: InboxStateTable;
  inbox_read: InboxReadTable;
  inbox_label: InboxLabelTable;
  inbox_message_label: InboxMessageLabelTable;
  inbox_note: InboxNoteTable;
  inbox_view: InboxViewTable;
}
// --- end unified inbox
// --- weekly report (migration 0070, src/api/weekly-report/)
export interface WeeklyReportSettingTable {
  workspace_id: string;
  enabled: Generated<boolean>;
  /** ISO weekday, 1 Monday … 7 Sunday, in the workspace's zone. */
  weekday: Generated<number>;
  hour: Generated<number>;
  updated_at: Timestamp;
}
export interface WeeklyReportRecipientTable {
  workspace_id: string;
  user_id: string;
  created_at: Timestamp;
}
export interface WeeklyReportRunTable {
  workspace_id: string;
  /** 'YYYY-Www' */
  iso_week: string;
  claimed_at: Timestamp | null;
  claimed_by: string | null;
  attempts: Generated<number>;
  sent_at: Timestamp | null;
  recipients: number | null;
  error: string | null;
}

export interface Database {
  weekly_report_setting: WeeklyReportSettingTable;
  weekly_report_recipient: WeeklyReportRecipientTable;
  weekly_report_run: WeeklyReportRunTable;
}
// --- end weekly report
// --- lead lists, tags and segments (0090_lead_lists.sql; owned by src/leads/lists)
export interface LeadListTable {
  id: string;
  workspace_id: string;
  name: string;
  kind: 'static' | 'segment';
  /** Segments only: the saved filter (src/leads/lists/segment-filter.ts). */
  filter: ColumnType<unknown, string | null | undefined, string | null>;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: DefaultTimestamp;
}

export interface LeadListMemberTable {
  list_id: string;
  lead_id: string;
  workspace_id: string;
  added_at: DefaultTimestamp;
}

export interface LeadTagTable {
  lead_id: string;
  workspace_id: string;
  tag: string;
  created_at: DefaultTimestamp;
}

export interface Database {
  lead_list: LeadListTable;
  lead_list_member: LeadListMemberTable;
  lead_tag: LeadTagTable;
}
// --- end lead lists
// --- single sign-on (0095_sso.sql; owned by src/api/auth/sso)
export interface WorkspaceSsoTable {
  workspace_id: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  issuer: string;
  client_id: string;
  client_secret_sealed: Buffer;
  allowed_domains: ColumnType<string[], string[] | undefined, string[]>;
  groups_claim: ColumnType<string, string | undefined, string>;
  /** [{group, role}] (src/api/auth/sso/settings.ts). */
  role_mapping: ColumnType<unknown, string | undefined, string>;
  default_role: ColumnType<'admin' | 'member', 'admin' | 'member' | undefined, 'admin' | 'member'>;
  password_allowed: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;

  updated_at: DefaultTimestamp;
}

/** 0116_sso_domain_proof.sql: the DNS proof of a domain admitted to single sign-on. */
export interface WorkspaceSsoDomainTable {
  workspace_id: string;
  domain: string;
  token: string;
  verified_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  checked_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  check_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** 0130: the daily re-check's failures in a row, and when the first of them was. */
  failures: ColumnType<number, number | undefined, number>;
  failing_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: CreatedAt;
}

export interface Database {
  workspace_sso: WorkspaceSsoTable;
  workspace_sso_domain: WorkspaceSsoDomainTable;
}
// --- end single sign-on
// --- notifications (0099_notifications.sql; owned by src/api/notify)
export type NotificationKind = 'reply_positive' | 'meeting_booked' | 'task_due' | 'mailbox_attention' | 'sso_attention';

export interface NotificationEventTable {
  id: Generated<number>;
  workspace_id: string;
  /** reply:<message> | task:<task> | mailbox:<id>:<health>:<md5(reason)>:<day> — unique per workspace. */
  source_key: string;
  kind: NotificationKind;
  user_id: string | null;
  /** The prospect it names: the event goes with the lead (erasure). */
  lead_id: string | null;
  title: string;
  body: string;
  link: string;
  occurred_at: DefaultTimestamp;
  fanned_out_at: Timestamp | null;
}

export interface NotificationPreferenceTable {
  workspace_id: string;
  user_id: string;
  kind: NotificationKind;
  in_app: boolean;
  browser: boolean;
  email: boolean;
  slack: boolean;
}

export interface NotificationSettingTable {
  workspace_id: string;
  user_id: string;
  scope: Generated<'mine' | 'all'>;
  digest_every_hours: Generated<1 | 4 | 24>;
  digest_last_at: Timestamp | null;
  digest_next_at: Timestamp | null;
  digest_attempts: Generated<number>;
  digest_error: string | null;
  /** The Slack incoming-webhook URL, sealed (notify/slack-url.ts): never read back in clear by a route. */
  slack_url_sealed: Buffer | null;
  slack_host: string | null;
  /** The receiver answered 404 or 410 (0119): no post is queued until the member saves a URL again. */
  slack_disabled_at: Timestamp | null;
  slack_disabled_reason: string | null;
  updated_at: DefaultTimestamp;
}

export interface NotificationTable {
  id: Generated<number>;
  workspace_id: string;
  user_id: string;
  event_id: number;
  in_app: boolean;
  browser: boolean;
  email_state: Generated<'none' | 'pending' | 'sent'>;
  read_at: Timestamp | null;
  created_at: DefaultTimestamp;
}

export interface NotificationSlackTable {
  id: Generated<number>;
  workspace_id: string;
  user_id: string;
  event_id: number;
  state: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  last_error: string | null;
  response_code: number | null;
  delivered_at: Timestamp | null;
}

export interface Database {
  notification_event: NotificationEventTable;
  notification_preference: NotificationPreferenceTable;
  notification_setting: NotificationSettingTable;
  notification: NotificationTable;
  notification_slack: NotificationSlackTable;
}
// --- end notifications

// --- the email editor (0091_email_editor.sql; src/sequence/email-templates.ts, common/email-html.ts)
export interface VariantTable {
  /** Sanitized HTML (common/email-html.ts); null: a text-only step. */
  body_html: ColumnType<string | null, string | null | undefined, string | null>;
}
export interface MailboxTable {
  signature_html: ColumnType<string | null, string | null | undefined, string | null>;
  signature_text: ColumnType<string | null, string | null | undefined, string | null>;
}
export interface EmailTemplateTable {
  id: string;
  workspace_id: string;
  name: string;
  subject: ColumnType<string, string | undefined, string>;
  body_html: string | null;
  body_text: string;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: DefaultTimestamp;
}
export interface Database {
  email_template: EmailTemplateTable;
}
// --- end email editor
// --- agencies (migration 0103)
export interface WorkspaceTable {
  /** The agency workspace that owns this client workspace; null for any other. */
  agency_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface WorkspaceBrandingTable {
  workspace_id: string;
  display_name: string;
  primary_color: string;
  accent_color: string;
  logo: Buffer | null;
  logo_type: 'image/png' | 'image/jpeg' | 'image/webp' | null;
  logo_version: Generated<number>;
  updated_at: DefaultTimestamp;
}

export interface Database {
  workspace_branding: WorkspaceBrandingTable;
}
// --- end agencies

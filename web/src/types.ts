/** The shapes the workspace routes answer with (src/api/routes/*.ts; see /openapi.json). */

export interface Mailbox {
  id: string;
  email: string;
  displayName: string | null;
  provider: 'smtp_imap' | 'gmail' | 'graph';
  health: 'ok' | 'warning' | 'paused' | 'error';
  healthReason: string | null;
  /** What Cadenza changed or found about the mailbox's setup (e.g. a wrong serverSavesSent switched off). */
  warnings: string[];
  dailyCap: number;
  /** Today's allowance after the ramp. */
  todayCap: number;
  sentToday: number;
  ramp: { day: number; days: number } | null;
  syncError: string | null;
  /** verified: its connection test passed; not_verified: added with the test skipped; failed: the last test failed. */
  verification: 'verified' | 'not_verified' | 'failed';
}

export interface ConnectionReport {
  ok: boolean;
  checks: { protocol: string; ok: boolean; message: string; detail: string | null }[];
}

/** Why an enrollment cannot progress until a person acts (src/sequence/blocked.ts). */
export interface Blocked {
  code: string;
  reason: string;
  action: string;
  detail: string | null;
}

export interface Lead {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  title: string | null;
  country: string | null;
  timeZone: string | null;
  custom: Record<string, string>;
}

export interface ImportReport {
  rowsRead: number;
  imported: number;
  updated: number;
  unchanged: number;
  rejected: number;
  rejectsByReason: Record<string, number>;
  warnings: number;
  issues: { line: number; reason: string; message: string; email?: string }[];
  columns: { header: string; target: string }[];
  durationMs: number;
}

export interface SequenceSummary {
  id: string;
  key: string;
  name: string;
  status: 'draft' | 'active' | 'paused' | 'archived';
  steps: number;
  active: number;
  replied: number;
}

export interface StepDraft {
  key: string;
  type: 'email' | 'call' | 'manual' | 'wait';
  delay: string;
  /** An email step's first variant: its subject, body, key and weight. */
  subject: string;
  body: string;
  variantKey?: string;
  weight?: number;
  title?: string;
  notes?: string;
  /** A call or manual step: the sequence waits until the task is done (default true). */
  waitForTask?: boolean;
  /** Other variants of an email step (A/B), sent by weight against the first. */
  variants: { key: string; subject: string; body: string; weight: number }[];
}

/** Set rules only; an unset rule takes its default (src/sequence/model.ts defaultStopRules). */
export interface StopRules {
  onOutOfOffice?: 'pause' | 'ignore';
  oooDefaultPauseDays?: number;
  onMeetingBooked?: 'finish' | 'continue';
  maxSoftBounces?: number;
  stopCompanyOnReply?: boolean;
}

export interface SequenceDetail {
  id: string;
  key: string;
  name: string;
  status: SequenceSummary['status'];
  window: string;
  /** A random delay of up to this many minutes on each send, so sends do not fall on the minute. */
  jitterMinutes: number;
  /** Skip the lead's public holidays. */
  holidays: boolean;
  trackOpens: boolean;
  trackClicks: boolean;
  stopRules: StopRules;
  mailboxes: string[];
  steps: StepDraft[];
  /** From PUT: e.g. a step delay shorter than its mailboxes' gap between sends. */
  warnings?: string[];
}

export interface EnrollResult {
  enrolled: number;
  refused: { leadId: string; email?: string; reason: string; detail?: string }[];
}

/** GET .../inbox items (src/api/routes/inbox.ts). */
export interface InboxMessage {
  id: string;
  mailboxId: string | null;
  mailboxEmail: string | null;
  enrollmentId: string | null;
  leadId: string | null;
  from: string | null;
  /** Where a reply goes (RFC 5322 Reply-To); empty: to from. */
  replyTo: string[];
  to: string[];
  cc: string[];
  subject: string | null;
  excerpt: string | null;
  at: string;
  folder: string | null;
  label: string | null;
  confidence: number | null;
  reason: string | null;
  intent: string | null;
  /** What ingestion did: reply (enrollment stopped), hard_bounce, out_of_office, unsubscribe, needs_review, inbox… */
  action: string | null;
  needsReview: boolean;
}

export interface Task {
  id: string;
  kind: 'call' | 'manual';
  state: 'open' | 'done' | 'skipped' | 'cancelled';
  title: string;
  notes: string | null;
  dueAt: string;
  leadEmail: string;
  leadName: string | null;
  phone: string | null;
  sequenceName: string;
}

export interface Analytics {
  asOf: string;
  totals: { sends: number; replies: number; bounces: number; unsubscribes: number };
  days: { day: string; sends: number; replies: number; bounces: number; unsubscribes: number }[];
  funnel: { sequenceName: string; stepKey: string; removed: boolean; sent: number; replied: number }[];
  unattributedReplies: number;
  variants: { sequenceName: string; stepKey: string; variantKey: string; sent: number; replied: number }[];
  replyToStop: { count: number; p50Ms: number | null; p90Ms: number | null; p99Ms: number | null };
}

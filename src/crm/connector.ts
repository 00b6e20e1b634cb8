/**
 * CRM sync (docs/crm.md): one interface every CRM connector implements (src/crm/<kind>/), so the
 * outbox writer, the change reader and the tests treat HubSpot, Salesforce, Pipedrive and Twenty
 * alike. A connector is plain I/O against the CRM's documented HTTP API (its base URL configurable,
 * so the emulators in src/sim/emulators/<kind>/ serve the tests); it keeps no state of its own
 * beyond a token cache: cursors, the outbox and the field ownership live in Cadenza's store.
 */

export type CrmKind = 'hubspot' | 'salesforce' | 'pipedrive' | 'twenty';

/** What Cadenza writes to the CRM: each fact of the enrollment, once. */
export type CrmActivityKind =
  | 'email_sent'
  | 'email_opened'
  | 'email_clicked'
  | 'email_replied'
  | 'email_bounced'
  | 'unsubscribed'
  | 'call'
  | 'task_completed';

export interface CrmActivity {
  /**
   * Stable per fact (e.g. `cadenza:event:123`, `cadenza:call:<uuid>`): written into the CRM record
   * (a custom property or field), so that a retry after an answer that was lost finds the record
   * instead of writing it again. At most 100 characters of [A-Za-z0-9:._-].
   */
  externalId: string;
  kind: CrmActivityKind;
  /** The prospect's address: the CRM contact (person) the activity is attached to. Never created by an activity. */
  email: string;
  /** When it happened (ISO 8601). */
  occurredAt: string;
  /** One line, e.g. "Email sent: Quick question (Outbound Q4, step 2)". */
  title: string;
  /** Plain text, at most a few KB (the body's first lines, a reply's classification, call notes). */
  body: string;
  /** An open by an image proxy or a security scanner, not a person (shown as such). */
  automatic?: boolean;
  /** A reply's classification (interested, not_now, out_of_office, …). */
  replyIntent?: string;
  call?: {
    direction: 'outbound' | 'inbound';
    outcome: string;
    durationSeconds: number;
    /** Where a signed-in member plays the recording in Cadenza; absent: not recorded. */
    recordingUrl?: string;
    /** The transcript's text, when one was made. */
    transcript?: string;
  };
}

export type CrmWriteResult =
  /** In the CRM now (written by this call, or found there by its externalId). */
  | { externalId: string; status: 'written'; crmId: string }
  /** No contact with this address in the CRM: not written, and not retried (the CRM owns contacts). */
  | { externalId: string; status: 'no_contact' }
  /** The CRM refused this activity for good (a validation error): not retried, shown with the reason. */
  | { externalId: string; status: 'rejected'; error: string };

/**
 * The CRM could not take the request now: an outage, a 5xx, a 429, a timeout, a connection reset.
 * Nothing, all, or part of a batch may have been written; the writer retries the whole batch after
 * `retryAfterMs` (the CRM's Retry-After when it gave one), and the connector finds what was
 * written by its externalId.
 */
export class CrmTransientError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'CrmTransientError';
  }
}

/** The connection's credentials were refused or revoked (401, invalid_grant): the connection pauses with this reason. */
export class CrmAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CrmAuthError';
  }
}

/** The CRM's documented limits the writer keeps within (a token bucket per connection). */
export interface CrmLimits {
  /** Most activities in one writeActivities call. */
  maxBatch: number;
  /** Requests per window (e.g. HubSpot private apps: 100 per 10 s). */
  requests: number;
  windowMs: number;
  /** The most HTTP requests one writeActivities call makes (search + create…), to reserve them before it starts. */
  requestsPerBatch: number;
}

export interface CrmConnector {
  readonly kind: CrmKind;
  readonly limits: CrmLimits;
  /**
   * Prepares the CRM once per connection (e.g. creates the custom property that holds the
   * externalId); safe to run again.
   */
  prepare(): Promise<void>;
  /**
   * Writes each activity of the batch (at most limits.maxBatch) once: an activity already in the
   * CRM (by its externalId) is answered `written` with its id and not written again. One result
   * per activity, in any order. Throws CrmTransientError or CrmAuthError for the whole batch.
   */
  writeActivities(batch: readonly CrmActivity[]): Promise<CrmWriteResult[]>;
}

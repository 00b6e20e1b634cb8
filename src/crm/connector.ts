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
  /**
   * The requests made so far that count against the CRM's limit (a counter). With it, the writer
   * counts what a batch really made instead of its worst case (limits.requestsPerBatch), which it
   * still reserves before the batch starts. Absent: the worst case is counted.
   */
  requestsMade?(): number;
}

/*
 * Changes in (docs/crm.md "Changes in"). The CRM owns contacts, owners and deals; Cadenza reads
 * their changes from a resume position (a cursor) that the sync stores only after the changes are
 * stored, the same rule as mailbox cursors. The optional methods below are what a connector offers
 * for it; a connector without them only writes activities.
 */

/** A contact (person) as the CRM holds it, in Cadenza's words. */
export interface CrmContact {
  /** The CRM's id of the record. */
  crmId: string;
  /** The primary address, lower-cased; null when the record has none. */
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  company: string | null;
  title: string | null;
  phone: string | null;
  /** The email of the CRM user who owns the record (matched to a Cadenza member by address). */
  ownerEmail: string | null;
  /** HubSpot's lifecycle stage, Salesforce's lead status, Pipedrive's label… as the CRM names it. */
  lifecycleStage: string | null;
  /** The CRM's "do not contact" / "email opt out" / "unsubscribed" flag. */
  doNotContact: boolean;
  /** When the CRM last changed the record (ISO 8601). */
  updatedAt: string;
  /** The CRM user (id) who made that change, when the CRM says; the connection's own user's changes are ignored. */
  updatedBy?: string | null;
  /** Deleted (or archived / merged away) in the CRM. */
  deleted?: boolean;
  /**
   * The CRM's copies of Cadenza's own fields (the custom properties prepare() made), when the
   * connector reads them: the sync compares them with what it last wrote, to log a person's edit
   * of a Cadenza-owned field as a conflict. Absent: not read (no conflict can be seen).
   */
  cadenzaSequenceStatus?: string | null;
  cadenzaLastActivityAt?: string | null;
}

/** A deal (opportunity) as the CRM holds it: what the stop rules look at. */
export interface CrmDeal {
  crmId: string;
  name: string;
  /** The stage's id and label as the CRM names them (e.g. "appointmentscheduled", "Closed Won"). */
  stage: string;
  stageLabel?: string | null;
  /** The addresses of the contacts the deal is associated with, lower-cased. */
  contactEmails: string[];
  ownerEmail: string | null;
  createdAt: string;
  updatedAt: string;
  updatedBy?: string | null;
  deleted?: boolean;
}

/** One page of changes, oldest first, and the position to resume after them. */
export interface CrmChangePage {
  contacts: CrmContact[];
  deals: CrmDeal[];
  /** Opaque; stored by the sync once these changes are stored, and given back to the next call. */
  cursor: string;
  /** More changes are waiting now (call again at once). */
  more: boolean;
}

/**
 * The cursor is older than the CRM keeps its changes (Salesforce CDC's 72 h, a window past the
 * 30 days of getUpdated, an expired sync token): the sync starts a bounded full resync (cursor null),
 * deduplicated against what it holds.
 */
export class CrmCursorExpiredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CrmCursorExpiredError';
  }
}

/** A list, view, filter or report in the CRM that sequences can enroll from. */
export interface CrmList {
  id: string;
  name: string;
  /** How many members the CRM says it has, when it says. */
  size?: number | null;
}

export interface CrmListPage {
  contacts: CrmContact[];
  /** Null on the last page. */
  next: string | null;
}

export interface CrmChangeReader {
  /**
   * Changes to contacts and deals after `cursor` (null: from the start, a full sync), at most about
   * `limit` records. Records may repeat across pages (the sync deduplicates by crmId and
   * updatedAt); none may be skipped. Throws CrmCursorExpiredError, CrmTransientError, CrmAuthError.
   */
  readChanges(cursor: string | null, limit: number): Promise<CrmChangePage>;
  /** The CRM user id this connection acts as, so that its own changes are recognised and ignored. */
  integrationUserId(): Promise<string | null>;
  /** The lists (views, filters) a sequence can enroll from. */
  lists(): Promise<CrmList[]>;
  /** One page of a list's members. */
  listMembers(listId: string, page: string | null): Promise<CrmListPage>;
}

/** Whether a connector reads changes (and lists) as well as writing activities. */
export function readsChanges(c: CrmConnector): c is CrmConnector & CrmChangeReader {
  return typeof (c as Partial<CrmChangeReader>).readChanges === 'function';
}

/**
 * Field ownership, the out half (docs/crm.md "Field ownership"): the contact fields Cadenza owns on
 * a connection (by default its sequence state and last activity) are written to the CRM's contact
 * as custom properties/fields that prepare() created. Keys are Cadenza's field names
 * (`cadenzaSequenceStatus`, `cadenzaLastActivityAt`, or a contact field the admin gave to Cadenza);
 * null clears the field.
 */
export interface CrmFieldWriter {
  writeContactFields(updates: ReadonlyArray<{ crmId: string; fields: Readonly<Record<string, string | null>> }>): Promise<void>;
}

export function writesFields(c: CrmConnector): c is CrmConnector & CrmFieldWriter {
  return typeof (c as Partial<CrmFieldWriter>).writeContactFields === 'function';
}

/**
 * The API's shapes as the screens name them. Every one is the generated type of a route
 * (api-types.gen.ts, made from the server's own zod schemas by `npm run gen:api-types`): nothing
 * here is written by hand, so a field the API adds, drops or renames fails `npm run typecheck`
 * instead of drifting (issue 12: ImportReport had lost a field). Routes are named `METHOD /path`
 * as in src/api/routes.
 */
import type { ApiRoutes, Enrollment, Sequence } from './api-types.gen.ts';

export type {
  AuditEvent,
  ApiKey,
  ConnectionReport,
  CrmConnection,
  DemoStatus,
  Domain,
  DomainAlert,
  DomainCheck,
  Enrollment,
  EnrollmentSend,
  Erasure,
  GettingStarted,
  ImportReport,
  InboxMessage,
  Invitation,
  InvitationAccepted,
  InvitationCreated,
  InvitationPreview,
  Lead,
  LeadImport,
  Mailbox,
  MailboxRemoval,
  Me,
  Member,
  Pacing,
  Retention,
  SegmentActivityCondition,
  SegmentFieldCondition,
  SubjectExport,
  Suppression,
  TrackingHost,
  WebhookDelivery,
  WebhookEndpoint,
  WorkspaceSettings,
} from './api-types.gen.ts';

export type ApiRoute = keyof ApiRoutes;
/** What a route answers (its success status). */
export type ApiResponse<R extends ApiRoute> = ApiRoutes[R]['response'];
/** The JSON body a route takes (fields with a default may be left out). */
export type ApiBody<R extends ApiRoute> = ApiRoutes[R]['body'];

export type Analytics = ApiResponse<'GET /api/workspaces/:workspaceId/analytics'>;
/** A mailbox's sends, bounces and replies over the analytics window, and its health now. */
export type MailboxFigures = ApiResponse<'GET /api/workspaces/:workspaceId/analytics/mailboxes'>['mailboxes'][number];

/** The window's figures per sequence, step, variant, mailbox or rep (ops/figures.ts breakdown). */
export type AnalyticsBreakdown = ApiResponse<'GET /api/workspaces/:workspaceId/analytics/breakdown'>;
export type AnalyticsFunnel = ApiResponse<'GET /api/workspaces/:workspaceId/analytics/funnel'>;
export type AnalyticsReplyTimes = ApiResponse<'GET /api/workspaces/:workspaceId/analytics/reply-times'>;
export type AnalyticsSendHours = ApiResponse<'GET /api/workspaces/:workspaceId/analytics/send-hours'>;
export type AnalyticsMailboxDays = ApiResponse<'GET /api/workspaces/:workspaceId/analytics/mailbox-days'>;
export type WeeklyReport = ApiResponse<'GET /api/workspaces/:workspaceId/weekly-report'>;

export type SequenceSummary = ApiResponse<'GET /api/workspaces/:workspaceId/sequences'>['sequences'][number];
/** Set rules only; an unset rule takes its default (src/sequence/model.ts defaultStopRules). */
export type StopRules = Sequence['stopRules'];
type SequenceStep = Sequence['steps'][number];
/** A step in the editor: as GET gives it, but a step added here has no first-variant key or weight yet (PUT fills them). */
export type StepDraft = Omit<SequenceStep, 'variantKey' | 'weight'> & Partial<Pick<SequenceStep, 'variantKey' | 'weight'>>;
/** A sequence in the editor: GET's answer (a new one has no id or version yet), and the warnings of the last PUT. */
export type SequenceDetail = Omit<Sequence, 'steps' | 'id' | 'version'> & { id: string; version?: number; steps: StepDraft[]; warnings?: string[] };

/*
 * Branch steps (issue 18), as the API carries them (src/api/routes/sequence-body.ts): conditions in
 * the definition file's snake_case. Written here until the generated types carry them.
 */
export const callOutcomes = ['connected', 'no_answer', 'voicemail', 'busy', 'wrong_number', 'meeting_booked', 'not_interested'] as const;
export const leadFields = ['email', 'first_name', 'last_name', 'company', 'title', 'phone', 'country', 'region', 'time_zone'] as const;
export const replyRuleIntents = ['interested', 'not_interested', 'wrong_person', 'referral', 'question', 'neutral'] as const;
export type Condition =
  | { opened: string }
  | { clicked: string }
  | { call_outcome: { step: string; in: string[] } }
  | { lead: { field: string; equals?: string; in?: string[]; contains?: string; exists?: boolean } }
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition };
/** Another sequence of the workspace (by key), its first step due no earlier than `after`. */
export type MoveTo = { moveTo: string; after: string };
export type ArmDraft = { key: string; when?: Condition; then: 'continue' | 'end' | MoveTo; steps: StepDraft[] };
export type BranchDraft = { key: string; type: 'branch'; delay: string; branches: ArmDraft[] };
/** A step of the flow: an ordinary step, or a branch whose arms hold ordinary steps. */
export type FlowStep = StepDraft | BranchDraft;
export type ReplyRules = Partial<Record<(typeof replyRuleIntents)[number], 'notify' | MoveTo>>;
/** The editor's sequence: steps may be branches, stop rules may carry reply rules. */
export type SequenceDraft = Omit<SequenceDetail, 'steps' | 'stopRules'> & { steps: FlowStep[]; stopRules: StopRules & { onReply?: ReplyRules } };
export const isBranch = (s: FlowStep): s is BranchDraft => s.type === 'branch';
/** An A/B test's settings (an email step's `experiment`, a sequence experiment's own): each left out takes its default. */
export type ExperimentSettingsDraft = NonNullable<SequenceStep['experiment']>;
/** An experiment declared on the sequence (docs/experiments.md "Sequence experiments"), as the API carries it. */
export type SequenceExperimentDraft = Sequence['experiments'][number];
export type ExperimentArmDraft = SequenceExperimentDraft['arms'][number];
/** What an arm fixes on one step: its variant, the delay before it, its send hours. */
export type ArmChoiceDraft = ExperimentArmDraft['steps'][number];

export type EnrollResult = ApiResponse<'POST /api/workspaces/:workspaceId/sequences/:sequenceId/enroll'>;
export type ContentCheckResult = ApiResponse<'POST /api/workspaces/:workspaceId/sequences/:sequenceId/steps/:stepKey/content-check'>;

/** Why an enrollment cannot progress until a person acts (src/sequence/blocked.ts). */
export type Blocked = NonNullable<Enrollment['blocked']>;
export type BulkMoveResult = ApiResponse<'POST /api/workspaces/:workspaceId/enrollments/move'>;

export type LeadDetail = ApiResponse<'GET /api/workspaces/:workspaceId/leads/:leadId'>;
/** One page of GET …/leads: total counts the matches on the first page, up to a cap past which it is "at least". */
export type LeadsPage = ApiResponse<'GET /api/workspaces/:workspaceId/leads'>;

export type ThreadEntry = ApiResponse<'GET /api/workspaces/:workspaceId/inbox/messages/:messageId'>['thread'][number];

export type Task = ApiResponse<'GET /api/workspaces/:workspaceId/tasks'>['tasks'][number];

/** The unified inbox (GET …/inbox's query, stored as a saved view's filters). */
export type InboxView = ApiResponse<'GET /api/workspaces/:workspaceId/inbox/views'>['views'][number];
export type InboxFilters = InboxView['filters'];
export type InboxDetail = ApiResponse<'GET /api/workspaces/:workspaceId/inbox/messages/:messageId'>;
export type InboxNote = InboxDetail['notes'][number];
export type TeamLabel = ApiResponse<'GET /api/workspaces/:workspaceId/inbox/labels'>['labels'][number];

/** Notifications (issue 19): the bell, and a member's own choices. */
export type Notifications = ApiResponse<'GET /api/workspaces/:workspaceId/notifications'>;
export type NotificationPreferences = ApiResponse<'GET /api/workspaces/:workspaceId/notification-preferences'>;

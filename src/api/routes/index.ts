import { agencyRoutes } from './agency.ts';
import { brandingRoutes } from './branding.ts';
import type { ApiRoute } from '../http/route.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { auditRoutes } from './audit.ts';
import { callRoutes } from './calls.ts';
import { authRoutes } from './auth.ts';
import { analyticsRoutes } from './analytics.ts';
import { analyticsChartRoutes } from './analytics-charts.ts';
import { weeklyReportRoutes } from './weekly-report.ts';
import { notificationRoutes } from './notifications.ts';
import { contentCheckRoutes } from './content-check.ts';
import { demoRoutes } from './demo.ts';
import { dialerRoutes } from './dialer.ts';
import { voicemailRoutes } from './voicemail.ts';
import { domainRoutes } from './domains.ts';
import { enrollmentRoutes } from './enrollments.ts';
import { experimentRoutes } from './experiments.ts';
import { gettingStartedRoutes } from './getting-started.ts';
import { inboxRoutes } from './inbox.ts';
import { inboxTriageRoutes } from './inbox-triage.ts';
import { invitationRoutes } from './invitations.ts';
import { leadHygieneRoutes } from './lead-hygiene.ts';
import { leadImportRoutes } from './lead-imports.ts';
import { leadListRoutes } from './lead-lists.ts';
import { emailTemplateRoutes } from './email-templates.ts';
import { leadRoutes } from './leads.ts';
import { mailboxRoutes } from './mailboxes.ts';
import { pacingRoutes } from './pacing.ts';
import { warmupRoutes } from './warmup.ts';
import { warmupPeerRoutes } from './warmup-peers.ts';
import { memberRoutes } from './members.ts';
import { sequenceRoutes } from './sequences.ts';
import { suppressionRoutes } from './suppressions.ts';
import { privacyRoutes } from './privacy.ts';
import { taskRoutes } from './tasks.ts';
import { webhookRoutes } from './webhooks.ts';
import { ssoRoutes } from './sso.ts';
import { crmRoutes } from './crm.ts';
import { crmChangeRoutes } from './crm-changes.ts';
import { trackingDomainRoutes } from './tracking-domain.ts';
import { workspaceRoutes } from './workspace.ts';

/**
 * Every API route, one list per resource file. The server registers exactly these, and
 * src/api/authz.test.ts calls every workspace route here from another workspace: a route added to
 * a resource list is tested without anyone remembering to.
 */
export const apiRoutes: readonly ApiRoute[] = [
  ...authRoutes,
  ...workspaceRoutes,
  ...gettingStartedRoutes,
  ...trackingDomainRoutes,
  ...memberRoutes,
  ...invitationRoutes,
  ...apiKeyRoutes,
  ...auditRoutes,
  ...webhookRoutes,
  ...ssoRoutes,
  ...agencyRoutes,
  ...brandingRoutes,
  ...crmRoutes,
  ...crmChangeRoutes,
  ...mailboxRoutes,
  ...domainRoutes,
  ...pacingRoutes,
  ...warmupRoutes,
  ...warmupPeerRoutes,
  ...leadHygieneRoutes,
  ...leadRoutes,
  ...leadListRoutes,
  ...emailTemplateRoutes,
  ...leadImportRoutes,
  ...sequenceRoutes,
  ...contentCheckRoutes,
  ...enrollmentRoutes,
  ...inboxRoutes,
  ...inboxTriageRoutes,
  ...suppressionRoutes,
  ...privacyRoutes,
  ...taskRoutes,
  ...callRoutes,
  ...dialerRoutes,
  ...voicemailRoutes,
  ...analyticsRoutes,
  ...analyticsChartRoutes,
  ...weeklyReportRoutes,
  ...notificationRoutes,
  ...experimentRoutes,
  ...demoRoutes,
];

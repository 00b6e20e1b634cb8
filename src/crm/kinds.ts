import type { CrmActivityKind, CrmKind } from './connector.ts';

/**
 * The CRMs and activity kinds Cadenza knows, and each CRM's default API address: plain constants
 * with no server dependency, so that the web app's Integrations screen imports the same lists the
 * API validates with (connections.ts re-exports them for the server).
 */
export const CRM_KINDS: readonly CrmKind[] = ['hubspot', 'salesforce', 'pipedrive', 'twenty'];
export const CRM_ACTIVITY_KINDS: readonly CrmActivityKind[] = ['email_sent', 'email_opened', 'email_clicked', 'email_replied', 'email_bounced', 'unsubscribed', 'call', 'task_completed'];

/** Where each CRM's API is when the admin gives no address (Salesforce's is the org's own instance; Twenty's a self-hosted one's or its cloud). */
export const DEFAULT_BASE_URLS: Partial<Record<CrmKind, string>> = {
  hubspot: 'https://api.hubapi.com',
  pipedrive: 'https://api.pipedrive.com',
  twenty: 'https://api.twenty.com',
};

import type { SyncedField } from '../../../src/crm/field-ownership.ts';

/**
 * The Integrations card's words: each CRM's name, each activity kind and contact field as a person
 * reads it, and a connection's problem (its pause reason, its last error) in plain words with the
 * CRM's own answer kept for a disclosure. A kind the server adds later reads as itself rather than
 * disappear.
 */
const CRM_NAMES: Record<string, string> = { hubspot: 'HubSpot', salesforce: 'Salesforce', pipedrive: 'Pipedrive', twenty: 'Twenty' };

export function crmName(kind: string): string {
  return CRM_NAMES[kind] ?? kind.charAt(0).toUpperCase() + kind.slice(1);
}

/** What the token field asks for, per CRM (the API takes one string; Salesforce's is a JSON credential). */
export const TOKEN_HINTS: Record<string, string> = {
  hubspot: 'A private app access token (pat-…) with the CRM contacts and engagements scopes.',
  twenty: 'An API key from Twenty: Settings → APIs & Webhooks.',
  pipedrive: 'Your personal API token from Pipedrive: Personal preferences → API.',
  salesforce:
    'A JSON credential of a connected app: {"refreshToken": "…", "clientId": "…", "clientSecret": "…"}. Cadenza uses the refresh token to get access tokens for your instance.',
};

const ACTIVITY_NAMES: Record<string, string> = {
  email_sent: 'Emails sent',
  email_opened: 'Opens',
  email_clicked: 'Link clicks',
  email_replied: 'Replies',
  email_bounced: 'Bounces',
  unsubscribed: 'Unsubscribes',
  call: 'Calls',
  task_completed: 'Tasks completed',
};

export function activityName(kind: string): string {
  return ACTIVITY_NAMES[kind] ?? kind.replace(/_/g, ' ');
}

export const FIELD_NAMES: Record<SyncedField, string> = {
  email: 'Email',
  firstName: 'First name',
  lastName: 'Last name',
  company: 'Company',
  title: 'Title',
  phone: 'Phone',
  ownerEmail: 'Owner',
  lifecycleStage: 'Lifecycle stage',
  doNotContact: 'Do not contact',
  cadenzaSequenceStatus: 'Sequence status',
  cadenzaLastActivityAt: 'Last activity',
};

/**
 * A connection's problem as the writer recorded it (src/crm/writer.ts: the connector's error
 * message, or 'paused by an admin'), in a sentence that says what happens next. `said` is the
 * CRM's own answer, shown behind a disclosure; undefined when the words are the whole story.
 */
export function crmProblem(message: string, crm: string): { words: string; said?: string; refused?: boolean } {
  if (message === 'paused by an admin') return { words: 'Paused by an admin.' };
  // An OAuth grant whose refresh the CRM refused (src/crm/oauth/credential.ts, Salesforce's client): only a new consent helps.
  if (/must re-authorize|must reconnect|token endpoint answered 4\d\d/.test(message))
    return { words: `${crm} no longer accepts Cadenza's access (the app was removed, or the grant was revoked or expired). Re-authorize ${crm} to resume.`, said: message, refused: true };
  if (/no contact with this address/.test(message)) return { words: `No ${crm} contact has the lead's address.` };
  if (/\b(401|403)\b/.test(message)) return { words: `${crm} refused the token (revoked, expired, or missing a permission). Replace the token to resume.`, said: message, refused: true };
  if (/\b429\b/.test(message)) return { words: `${crm}'s request limit was reached: Cadenza waits and tries again.`, said: message };
  if (/\b5\d\d\b|unreachable|gave no answer|not JSON|did not account|answered without|answered no/.test(message))
    return { words: `${crm} could not be reached or failed to answer: Cadenza tries again.`, said: message };
  if (/\b4\d\d\b/.test(message)) return { words: `${crm} refused what Cadenza sent.`, said: message };
  return { words: message };
}

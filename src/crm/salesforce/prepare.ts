import type { SalesforceClient } from './client.ts';
import { ACTIVITY_ID_FIELD } from './tasks.ts';

/**
 * What prepare() checks: Task has the external-id field the upsert keys on (describe,
 * GET /sobjects/Task/describe). It does not create it. The Tooling API can
 * (POST /tooling/sobjects/CustomField), but a field made that way has no field-level security for
 * any profile or permission set, so the integration user could not see it until an admin granted
 * it in Setup anyway; one clear step for the admin is better than half of it done silently.
 */
export async function checkActivityIdField(client: SalesforceClient): Promise<void> {
  const answer = await client.request('GET', '/sobjects/Task/describe');
  const fields = (answer.body?.fields ?? []) as Array<{ name?: string; externalId?: boolean; createable?: boolean; updateable?: boolean }>;
  const f = fields.find((x) => x.name?.toLowerCase() === ACTIVITY_ID_FIELD.toLowerCase());
  const how = `In Setup → Object Manager → Activity → Fields & Relationships, create a Text(100) field "Cadenza Activity Id" (API name ${ACTIVITY_ID_FIELD}) marked "External ID" and "Unique", and give the integration user read and edit access to it`;
  if (!f) throw new Error(`Salesforce: Task has no ${ACTIVITY_ID_FIELD} field visible to the integration user. ${how}.`);
  if (!f.externalId) throw new Error(`Salesforce: Task's ${ACTIVITY_ID_FIELD} is not marked External ID, so Cadenza cannot upsert by it. ${how}.`);
  if (!f.createable || !f.updateable) throw new Error(`Salesforce: the integration user cannot write Task's ${ACTIVITY_ID_FIELD}. ${how}.`);
}

import type { SalesforceClient } from './client.ts';
import { SalesforceRefusal } from './client.ts';

/**
 * Field ownership, the out half: the Contact fields Cadenza owns, written with one PATCH
 * /sobjects/Contact/{id} per contact (REST API Developer Guide, "Update a Record"; 204 on success).
 *
 * Cadenza's names map to Salesforce API names: its own fields to custom fields the admin creates
 * (docs/providers/salesforce.md): cadenzaSequenceStatus → Cadenza_Sequence_Status__c (Text),
 * cadenzaLastActivityAt → Cadenza_Last_Activity_At__c (Date/Time); the standard fields an admin may
 * give to Cadenza by their Cadenza names (title → Title, …); and an API name (Title, Foo__c) as it is.
 *
 * A contact deleted in Salesforce since (404) has nothing to write: skipped. Every other refusal is
 * collected and thrown after the rest were written, so one bad contact does not hold back the others.
 */
const names: Record<string, string> = {
  cadenzaSequenceStatus: 'Cadenza_Sequence_Status__c',
  cadenzaLastActivityAt: 'Cadenza_Last_Activity_At__c',
  firstName: 'FirstName',
  lastName: 'LastName',
  title: 'Title',
  phone: 'Phone',
  doNotContact: 'HasOptedOutOfEmail',
};

export function salesforceField(name: string): string {
  const mapped = names[name];
  if (mapped) return mapped;
  if (/^[A-Z][A-Za-z0-9_]*$/.test(name)) return name;
  throw new Error(`Salesforce: no Contact field for Cadenza's ${JSON.stringify(name)}`);
}

export async function writeContactFields(client: SalesforceClient, updates: ReadonlyArray<{ crmId: string; fields: Readonly<Record<string, string | null>> }>): Promise<void> {
  const refused: string[] = [];
  for (const u of updates) {
    const body: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(u.fields)) {
      const f = salesforceField(k);
      // HasOptedOutOfEmail is a checkbox: Cadenza's field values are strings.
      body[f] = f === 'HasOptedOutOfEmail' ? v === 'true' : v;
    }
    try {
      await client.request('PATCH', `/sobjects/Contact/${encodeURIComponent(u.crmId)}`, {}, body);
    } catch (e) {
      if (!(e instanceof SalesforceRefusal)) throw e;
      if (e.status === 404) continue;
      refused.push(`${u.crmId}: ${e.message}`);
    }
  }
  if (refused.length) throw new Error(`Salesforce refused the field writes of ${refused.length} contact(s): ${refused.join('; ')}`);
}

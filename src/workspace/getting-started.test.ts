import { describe, expect, it } from 'vitest';
import { checklistItems, checklistVisible, FACT_CAP, type ChecklistFacts } from './getting-started.ts';

const none: ChecklistFacts = { mailboxes: 0, verifiedMailboxes: 0, healthyDomains: 0, checkedDomains: 0, leads: 0, sequencesWithSteps: 0, enrollments: 0 };

describe('the Getting started checklist', () => {
  it('each item is done from its own fact only, and says what is missing in words', () => {
    expect(checklistItems(none).map((i) => i.done)).toEqual([false, false, false, false, false]);
    const untested = checklistItems({ ...none, mailboxes: 1 });
    expect(untested[0]).toMatchObject({ done: false, detail: expect.stringMatching(/connection test has not passed/) });
    const broken = checklistItems({ ...none, checkedDomains: 1 });
    expect(broken[1]).toMatchObject({ done: false, detail: expect.stringMatching(/records missing or wrong/) });
    const all = checklistItems({ mailboxes: 2, verifiedMailboxes: 1, healthyDomains: 1, checkedDomains: 1, leads: 1, sequencesWithSteps: 2, enrollments: FACT_CAP + 1 });
    expect(all.map((i) => i.done)).toEqual([true, true, true, true, true]);
    expect(all.map((i) => i.detail)).toEqual([
      '1 mailbox connected and tested',
      '1 sending domain with SPF, DKIM, DMARC and MX in place',
      '1 lead in the workspace',
      '2 sequences with steps',
      'more than 10,000 leads enrolled',
    ]);
  });

  it('shows until every item is done or it is dismissed', () => {
    const some = checklistItems({ ...none, leads: 3 });
    expect(checklistVisible(some, null)).toBe(true);
    expect(checklistVisible(some, '2026-12-06T00:00:00.000Z')).toBe(false);
    expect(checklistVisible(checklistItems({ mailboxes: 1, verifiedMailboxes: 1, healthyDomains: 1, checkedDomains: 1, leads: 1, sequencesWithSteps: 1, enrollments: 1 }), null)).toBe(false);
  });
});

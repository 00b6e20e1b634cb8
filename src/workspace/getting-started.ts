/**
 * The Getting started checklist on a new workspace's first screen (issue 19). Every item ticks
 * itself from what the workspace holds (getting-started-facts.ts reads it); nobody ticks one by
 * hand, and the only thing a person stores is "dismiss the checklist".
 */

export type ChecklistKey = 'mailbox' | 'domain' | 'leads' | 'sequence' | 'launch';

/** What the checklist is computed from: counts read from the store in one pass. */
export interface ChecklistFacts {
  /** Mailboxes not removed, and those whose connection test passed (or OAuth ones, proved at the provider). */
  mailboxes: number;
  verifiedMailboxes: number;
  /** Sending domains (a mailbox's) whose last conclusive check found everything in place, and those checked at all. */
  healthyDomains: number;
  checkedDomains: number;
  leads: number;
  /** Sequences (not archived) with at least one step. */
  sequencesWithSteps: number;
  /** Enrollments made in the workspace, whatever became of them. */
  enrollments: number;
}

export interface ChecklistItem {
  key: ChecklistKey;
  title: string;
  done: boolean;
  /** What is still missing, in words (for an item not done), or what was found. */
  detail: string;
  /** The screen that does it. */
  path: string;
}

/**
 * Leads and enrollments are counted up to here (getting-started-facts.ts): the checklist is read
 * every 10 s by every open app, and a million leads need not be counted for it. Past it, "more than 10,000".
 */
export const FACT_CAP = 10_000;
const plural = (n: number, one: string, many = `${one}s`) => (n > FACT_CAP ? `more than ${FACT_CAP.toLocaleString('en')} ${many}` : `${n} ${n === 1 ? one : many}`);

export function checklistItems(f: ChecklistFacts): ChecklistItem[] {
  return [
    {
      key: 'mailbox',
      title: 'Connect a mailbox',
      done: f.verifiedMailboxes > 0,
      detail:
        f.verifiedMailboxes > 0
          ? `${plural(f.verifiedMailboxes, 'mailbox', 'mailboxes')} connected and tested`
          : f.mailboxes > 0
            ? 'A mailbox is connected, but its connection test has not passed yet: test it on the Mailboxes screen'
            : 'Connect the mailbox your sequences send from; its connection test must pass',
      path: '/mailboxes',
    },
    {
      key: 'domain',
      title: 'Verify your domain',
      done: f.healthyDomains > 0,
      detail:
        f.healthyDomains > 0
          ? `${plural(f.healthyDomains, 'sending domain')} with SPF, DKIM, DMARC and MX in place`
          : f.checkedDomains > 0
            ? 'The domain check found records missing or wrong: publish the records the Domains screen shows, then re-check'
            : 'Once a mailbox is connected, its domain is checked (SPF, DKIM, DMARC, MX)',
      path: '/domains',
    },
    {
      key: 'leads',
      title: 'Import leads',
      done: f.leads > 0,
      detail: f.leads > 0 ? `${plural(f.leads, 'lead')} in the workspace` : 'Import a CSV of the people you want to write to',
      path: '/leads',
    },
    {
      key: 'sequence',
      title: 'Write a sequence',
      done: f.sequencesWithSteps > 0,
      detail: f.sequencesWithSteps > 0 ? `${plural(f.sequencesWithSteps, 'sequence')} with steps` : 'Write the emails and the delays between them',
      path: '/sequences',
    },
    {
      key: 'launch',
      title: 'Launch it',
      done: f.enrollments > 0,
      detail: f.enrollments > 0 ? `${plural(f.enrollments, 'lead')} enrolled` : 'Open the sequence and press Launch to enroll your leads',
      path: '/sequences',
    },
  ];
}

/** The workspace settings key "dismiss the checklist" writes. */
export const DISMISSED_KEY = 'gettingStartedDismissedAt';

/** The checklist shows until every item is done or a person dismissed it. */
export function checklistVisible(items: readonly ChecklistItem[], dismissedAt: string | null): boolean {
  return dismissedAt === null && items.some((i) => !i.done);
}

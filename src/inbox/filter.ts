import { z } from 'zod';

/**
 * What the inbox shows: one filter set, taken by GET …/inbox as its query and stored as a saved
 * view's filters (sql/views.ts), so a view is exactly a list's query. Booleans are the strings a
 * query string carries. Every field given must match.
 */
export const inboxFilterSchema = z.object({
  q: z.string().trim().max(200).optional().describe('Search: words of the sender, the subject or the text, each matched as a word prefix ("dana acme" finds dana@acme.test)'),
  status: z.enum(['inbox', 'snoozed', 'done', 'all']).optional().describe('inbox (the default): not done, not snoozed (a snooze that came due is back); snoozed: sleeping now; done: archived'),
  label: z.string().max(40).optional().describe("The classifier's label (human_reply, auto_reply, bounce…)"),
  intent: z.string().max(40).optional().describe("The classifier's intent (interested, not_interested, meeting…)"),
  teamLabelId: z.uuid().optional().describe("One of the team's own labels (GET …/inbox/labels)"),
  sequenceId: z.uuid().optional(),
  mailboxId: z.uuid().optional(),
  repId: z.uuid().optional().describe("The rep (member) owning the mailbox that received it"),
  assigneeId: z.uuid().optional().describe('Assigned to this member'),
  unread: z.enum(['true', 'false']).optional().describe('true: only what the caller has not read; false: only what they have'),
  needsReview: z.enum(['true', 'false']).optional().describe('true: the review queue (verdicts below the confidence line, not yet reviewed)'),
  folder: z.enum(['inbox', 'junk', 'other']).optional(),
});

export type InboxFilter = z.output<typeof inboxFilterSchema>;

/** Words a search may hold: more narrow nothing a person can tell apart, and each is one index probe. */
const MAX_TERMS = 8;
const MAX_TERM_CHARS = 40;

/**
 * A search box's text as a tsquery of word prefixes, all required ("dana acme" → "dana:* & acme:*"),
 * or null when it holds no word. Words are runs of letters and digits: the same split the index's
 * expression makes of an address (sql/search.ts), and nothing tsquery would read as an operator.
 */
export function searchQuery(q: string | undefined): string | null {
  if (!q) return null;
  const words = q
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '')
    .slice(0, MAX_TERMS)
    .map((w) => w.slice(0, MAX_TERM_CHARS));
  return words.length ? words.map((w) => `${w}:*`).join(' & ') : null;
}

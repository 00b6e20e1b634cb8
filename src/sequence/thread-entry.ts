import type { SequenceDefinition } from './definition.ts';
import type { SequenceDef, StepDef } from './model.ts';

/**
 * A sequence whose first email has no subject of its own is a subsequence: its first email is a
 * reply in the thread the lead already has with the rep ("Re: " + that thread's subject,
 * In-Reply-To its last message), so a lead can only enter it by a move that keeps the mailbox
 * from an enrollment that wrote to them (bulk-enroll.ts refuses the others with `no_thread`, and
 * says why). Pure: the step that decides, or null when the enrollment needs no thread.
 *
 * The first email is the first live email step the enrollment does not skip (a move may start at
 * a later step), in position order: arm steps included, since an arm's email is the first email
 * of whoever takes that arm.
 */
export function threadEntry(seq: Pick<SequenceDef, 'steps'>, skipped: readonly string[]): StepDef | null {
  const first = seq.steps.find((s) => s.kind === 'email' && !s.archived && !skipped.includes(s.id));
  return first?.inThread ? first : null;
}

/** Why a lead cannot enter at a thread entry, in plain words; null when it can. */
export function threadRefusal(entry: StepDef, lead: { movedFrom: boolean; mailboxKept: boolean; threadFound: boolean }): string | null {
  const what = `its first email (step ${entry.key}) has no subject: it continues the thread the lead has with the rep`;
  if (!lead.movedFrom) return `${what}, so leads enter this sequence only by a move (a branch arm, a reply rule or a person's move) that keeps their mailbox`;
  if (!lead.mailboxKept) return `${what}, and the lead's mailbox is not in this sequence's pool`;
  if (!lead.threadFound) return `${what}, and nothing was sent to the lead from that mailbox yet`;
  return null;
}

/**
 * Said when such a sequence is applied (the API's PUT `warnings`, `cadenza sequence apply`): a
 * subject left out of a first email by mistake would otherwise surface only as refused enrollments.
 */
export function threadWarnings(def: Pick<SequenceDefinition, 'steps'>): string[] {
  const flat = def.steps.flatMap((s) => [s, ...(s.branches ?? []).flatMap((a) => a.steps)]);
  const first = flat.find((s) => s.kind === 'email');
  if (!first?.variants.some((v) => !v.subject)) return [];
  return [
    `step ${first.key}: the first email has no subject, so it continues the thread the lead already has with the rep ("Re: …"). Leads enter this sequence only by a move that keeps their mailbox (a branch arm's or reply rule's move_to, or a person's move) from a sequence that wrote to them; enrolling them directly is refused (no_thread). Give it a subject if this sequence starts conversations.`,
  ];
}

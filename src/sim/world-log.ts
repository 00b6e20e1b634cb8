/**
 * What truly happened in a simulated world, written from the world's side as it happens (issue 18):
 * each email that reached a prospect's server, each reply, bounce, unsubscribe and meeting, with
 * its times. Nothing here is read back from Cadenza's tables: the simulation writes a fact where the
 * world acts (the mail server takes a message, a prospect's message reaches the mailbox, a rep
 * clicks), so the analytics can be checked against it (sim/world-figures.ts).
 *
 * Two things the world only knows from what Cadenza told an actor, as a person would see them:
 * - an enrollment's card (its sequence and mailbox), which the rep sees once leads are enrolled or
 *   moved (by the rep, or by a branch arm or a reply rule: those the rep's screen shows at the end,
 *   with the enrollment each was moved from): the world's handle on "this prospect in that sequence";
 * - whether the engine took a reply or a bounce (`taken`): the answer the sync got. The engine
 *   ignores a reply or bounce to an enrollment already ended (by a reply, a bounce, an
 *   unsubscribe, a stop, a move, a failure), and docs/api.md counts only the ones it took; whether
 *   an enrollment had ended is the state machine's business, tested on its own
 *   (sequence/transition.test.ts). Everything else is the world's own.
 */

export type WorldSeries = 'sends' | 'replies' | 'bounces' | 'unsubscribes' | 'meetings' | 'positiveReplies';

/** The email a fact belongs to: the message the world received, with the ids its sender gave it. */
export interface WorldEmail {
  requestId: string;
  stepId: string;
  mailboxId: string;
  variantId: string | null;
}

export interface WorldFact {
  series: WorldSeries;
  enrollmentId: string;
  /**
   * When it happened in the world: the prospect's server took the email, the prospect's message
   * reached the mailbox, the rep clicked.
   */
  at: number;
  /**
   * When Cadenza's side took it in: the sync's read of a reply that had landed (seconds, or minutes
   * after a crash made it read again); the sender's record of a send (at once, minutes later in a
   * group commit, or hours later when a crash between send and record left it to the successor,
   * which finds it in the Sent folder); for a rep's click, `at`. Docs/api.md counts journal facts
   * at their journal time, which is this. NaN: a send not recorded (yet).
   */
  readAt: number;
  /** sends: the order Cadenza recorded them in (two at one instant: the later recorded is the later). */
  recordedN?: number;
  /**
   * sends: 'delivered' (reached the prospect's server) or 'copy only' (a pending copy in the Sent
   * folder, the message never handed over: Cadenza settles it as possibly sent and counts it).
   * Others: who made it ('prospect', 'rep', 'call', 'at RCPT': the server refused the recipient).
   */
  how: string;
  /** bounces: hard (the address does not exist) or soft. */
  hard?: boolean;
  /** Replies and bounces: the engine took it (see the file comment). Others: true. */
  taken: boolean;
  /** sends: the email itself. */
  email?: WorldEmail;
}

/** An enrollment as the rep's screen shows it: its sequence and the mailbox it sends from. */
export interface EnrollmentCard {
  sequenceId: string;
  mailboxId: string | null;
}

export class WorldLog {
  readonly facts: WorldFact[] = [];
  readonly enrollments = new Map<string, EnrollmentCard>();
  /**
   * Enrollment -> the one it was moved from (by a rep, a branch arm or a reply rule), as the lead's
   * timeline shows it ("moved from <S1> to <S2>"; the old enrollment's `movedTo`).
   */
  readonly movedFrom = new Map<string, string>();
  /** Mailbox -> the member who owns it (null: nobody); the world made the mailboxes. */
  readonly owners = new Map<string, string | null>();

  add(f: WorldFact): void {
    this.facts.push(f);
  }

  private records = 0;

  sent(email: WorldEmail & { enrollmentId: string }, at: number, how: 'delivered' | 'copy only'): void {
    const { enrollmentId, ...e } = email;
    this.add({ series: 'sends', enrollmentId, at, readAt: NaN, how, taken: true, email: e });
  }

  /** Cadenza's sender recorded the send of `requestId` (its first record; a second finds it recorded). */
  recorded(requestId: string, at: number): void {
    const f = this.facts.find((x) => x.series === 'sends' && x.email?.requestId === requestId && Number.isNaN(x.readAt));
    if (!f) return;
    f.readAt = at;
    f.recordedN = ++this.records;
  }

  enrolled(enrollmentId: string, card: EnrollmentCard): void {
    this.enrollments.set(enrollmentId, card);
  }

  count(series: WorldSeries): number {
    return this.facts.filter((f) => f.series === series).length;
  }
}

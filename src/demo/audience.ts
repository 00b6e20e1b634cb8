import type { Clock, TimerHandle } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Random } from '../common/random.ts';
import { parseMail } from '../ingest/parse/parse-mail.ts';
import type { EmulatedProvider, SentMail } from './emulated-providers.ts';
import type { Persona } from './personas.ts';
import { bounceReport, outOfOfficeNote, personReply, type OurMail, type Prospect, type ReactionKind } from './reaction-mail.ts';

/**
 * The simulated prospects: each reads what reached them (an email in a rep's Sent folder on an
 * emulator) and, when their persona says so, reacts after a while on the demo clock by mail into
 * the rep's emulated inbox: a reply, an out-of-office note or, from their server, a bounce. They
 * never touch Cadenza's store: catching the reaction and acting on it is the sync and ingestion
 * code's job.
 */
export interface AudienceMember extends Prospect {
  email: string;
  persona: Persona;
  /** Emails the sequence they are in sends (a persona reacting to a later one reacts to the last). */
  emails: number;
}

export type AudienceCounts = Record<ReactionKind, number>;

export class Audience {
  private readonly members = new Map<string, AudienceMember & { received: number; reacted: boolean }>();
  private readonly timers = new Set<TimerHandle>();
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  private seq = 0;
  /** Reactions delivered into the reps' mailboxes, by kind. */
  readonly delivered: AudienceCounts = { interested: 0, not_interested: 0, question: 0, bounce: 0, out_of_office: 0, unsubscribe: 0 };

  constructor(
    private readonly o: {
      clock: Clock;
      random: Random;
      deliver: (provider: EmulatedProvider, to: string, raw: Buffer) => Promise<void>;
      log?: Logger;
    },
    members: readonly AudienceMember[],
  ) {
    for (const m of members) this.members.set(m.email.toLowerCase(), { ...m, received: 0, reacted: false });
  }

  /** An email of ours reached its recipient. */
  received(sent: SentMail): void {
    if (this.stopped) return;
    const p = this.track(this.read(sent));
    void p;
  }

  private async read(sent: SentMail): Promise<void> {
    const mail = await parseMail(sent.raw);
    for (const to of mail.to) {
      const m = this.members.get(to.address.toLowerCase());
      if (!m) continue;
      const index = m.received++;
      const kind = m.persona.kind;
      if (kind === 'silent' || m.reacted || index !== Math.min(m.persona.onEmail, m.emails - 1)) continue;
      m.reacted = true;
      const our: OurMail = { messageId: mail.messageId ?? '', subject: mail.subject, from: mail.from?.address ?? sent.mailbox, to: m.email, references: mail.references, raw: sent.raw };
      const sentAt = this.o.clock.now();
      const h = this.o.clock.setTimer(m.persona.delayMs, () => {
        this.timers.delete(h);
        void this.track(this.react(kind, m, our, sentAt, mail.text, sent.provider, sent.mailbox));
      });
      this.timers.add(h);
    }
  }

  private async react(kind: ReactionKind, m: AudienceMember, our: OurMail, sentAt: number, ourText: string, provider: EmulatedProvider, repMailbox: string): Promise<void> {
    if (this.stopped) return;
    const at = this.o.clock.now();
    const domain = m.email.split('@')[1]!;
    const messageId = `<${at.toString(36)}.${(++this.seq).toString(36)}.${Math.floor(this.o.random.next() * 2 ** 32).toString(36)}@${kind === 'bounce' ? `mx1.${domain}` : domain}>`;
    let raw: Buffer;
    if (kind === 'bounce') raw = await bounceReport({ our, at, messageId });
    else if (kind === 'out_of_office') {
      const day = 86_400_000;
      const backAt = (Math.floor(at / day) + m.persona.backInDays) * day;
      raw = await outOfOfficeNote({ our, who: m, at, backAt, messageId });
    } else raw = await personReply(this.o.random, kind, { our, who: m, at, sentAt, messageId, ourText });
    await this.o.deliver(provider, repMailbox, raw);
    this.delivered[kind]++;
  }

  private track(p: Promise<void>): Promise<void> {
    const q = p.catch((e: unknown) => this.o.log?.error({ err: e }, 'demo prospect could not react'));
    this.inFlight.add(q);
    void q.finally(() => this.inFlight.delete(q));
    return q;
  }

  /** No more reactions; waits for those being delivered. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    await Promise.all([...this.inFlight]);
  }
}

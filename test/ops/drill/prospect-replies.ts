import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { replyMail } from '../../ingest/seed-sent-sequence.ts';
import { mailBed } from '../../mail/mailbed.ts';
import { bedUser, drillPass } from './seed.ts';

/**
 * The prospects of a drill, answering through the mail bed: each prospect user's INBOX is polled,
 * and every first email of this run (subject "Drill … <tag>") is answered at once by SMTP through
 * Postfix to the rep's mailbox, In-Reply-To its Message-ID, so replies are on their way while
 * the primary dies. A follow-up that arrives is only noted: a follow-up after a reply is a defect
 * the drill reports.
 */
export interface SentReply {
  /** The reply's own Message-ID. */
  messageId: string;
  /** The Message-ID of the email it answers. */
  inReplyTo: string;
  from: string;
  to: string;
  at: number;
}

export interface ProspectReplies {
  readonly replies: SentReply[];
  /** Message-IDs of follow-ups that reached a prospect. */
  readonly followUps: string[];
  /** What went wrong in a prospect's loop (that prospect stops answering). */
  readonly errors: string[];
  stop(): Promise<void>;
}

export async function startProspectReplies(o: { prospects: number[]; tag: string; everyMs?: number }): Promise<ProspectReplies> {
  const smtp = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
  const replies: SentReply[] = [];
  const followUps: string[] = [];
  const errors: string[] = [];
  const answered = new Set<string>();
  let stopped = false;
  const clients: ImapFlow[] = [];
  const loop = async (n: number) => {
    const c = new ImapFlow({ host: mailBed.host, port: mailBed.imapPort, secure: false, doSTARTTLS: false, auth: { user: bedUser(n), pass: drillPass }, logger: false, disableAutoIdle: true });
    c.on('error', () => undefined);
    clients.push(c);
    await c.connect();
    let next = 1;
    while (!stopped) {
      const lock = await c.getMailboxLock('INBOX');
      const found: Array<{ messageId: string; subject: string; from: string; to: string }> = [];
      try {
        const uids = (await c.search({ uid: `${next}:*`, subject: o.tag }, { uid: true })) || [];
        const fresh = uids.filter((u) => u >= next);
        if (fresh.length > 0) {
          for await (const m of c.fetch(fresh, { uid: true, envelope: true }, { uid: true })) {
            next = Math.max(next, m.uid + 1);
            const e = m.envelope;
            if (!e?.messageId || !e.subject) continue;
            found.push({ messageId: e.messageId, subject: e.subject, from: e.from?.[0]?.address ?? '', to: e.to?.[0]?.address ?? '' });
          }
        }
      } finally {
        lock.release();
      }
      for (const m of found) {
        if (answered.has(m.messageId)) continue;
        answered.add(m.messageId);
        if (m.subject.startsWith('Follow-up')) {
          followUps.push(m.messageId);
          continue;
        }
        const messageId = `<reply-${answered.size}-${o.tag}-${Date.now()}@inbox.test>`;
        const raw = replyMail({ from: m.to, to: m.from, inReplyTo: m.messageId, subject: `Re: ${m.subject}`, body: `Thanks, let's talk on Tuesday.\n\n> Hi`, messageId });
        await smtp.sendMail({ envelope: { from: m.to, to: [m.from] }, raw });
        replies.push({ messageId, inReplyTo: m.messageId, from: m.to, to: m.from, at: Date.now() });
      }
      await new Promise((r) => setTimeout(r, o.everyMs ?? 250));
    }
  };
  const loops = o.prospects.map((n) => loop(n).catch((e: unknown) => void errors.push(`${bedUser(n)}: ${(e as Error).message}`)));
  return {
    replies,
    followUps,
    errors,
    async stop() {
      stopped = true;
      await Promise.allSettled(loops);
      await Promise.all(clients.map((c) => c.logout().catch(() => c.close())));
      smtp.close();
    },
  };
}

/**
 * The keyed choice stream: HMAC-SHA256 under the pool key of the message's own fields (sender,
 * receiver, Message-ID, the message it answers, the names it greets and signs with), in counter
 * mode, read 32 bits per choice. Every choice the generator makes (language structure, template,
 * synonym, order) comes from it, so the text as a whole is the MAC of its fields: no fixed string
 * or header marks it, and only a holder of the pool key can write or recognise it.
 */
import { createHmac } from 'node:crypto';
import type { Choices } from './spin.ts';

export interface WarmupFields {
  from: string;
  to: string;
  messageId: string;
  /** The Message-ID answered, for a reply; absent for a first mail. */
  inReplyTo?: string;
  /** First names as greeted and signed (the From and To display names' first word); '' for none. */
  fromName: string;
  toName: string;
}

/** The fields as one unambiguous byte string (JSON of a fixed-order list; addresses lower case). */
export function canonicalFields(f: WarmupFields): string {
  const id = (s: string) => s.trim().replace(/^<|>$/g, '');
  return JSON.stringify(['cadenza-warmup-v1', f.from.trim().toLowerCase(), f.to.trim().toLowerCase(), id(f.messageId), id(f.inReplyTo ?? ''), f.fromName.trim(), f.toName.trim()]);
}

export class MacChoices implements Choices {
  private block = Buffer.alloc(0);
  private at = 0;
  private counter = 0;
  constructor(
    private readonly key: Buffer,
    private readonly fields: string,
  ) {}

  pick(k: number): number {
    if (k <= 1) return 0;
    if (this.at + 4 > this.block.length) {
      const c = Buffer.alloc(4);
      c.writeUInt32BE(this.counter++);
      this.block = createHmac('sha256', this.key).update(this.fields).update(c).digest();
      this.at = 0;
    }
    const u = this.block.readUInt32BE(this.at);
    this.at += 4;
    // The bias of u mod k is below k / 2^32: at most a few alternatives, it is nil.
    return u % k;
  }
}

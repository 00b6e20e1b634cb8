import { newId } from '../../src/common/ids.ts';
import type { Random } from '../../src/common/random.ts';
import type { Conn } from '../../src/store/in-tx.ts';
import { recordWarmupReceipt } from '../../src/warmup/membership.ts';

const DAY = 86_400_000;
const MIN = 60_000;

/**
 * Warmup mail `mailbox` (address `from`) sent, as the planner plants it, and the receiving side's
 * receipt of each a minute later: one per [folder, days before `now`]. Message-IDs from `tag` and a counter.
 */
export async function plantReceipts(db: Conn, random: Random, o: { mailbox: string; from: string; now: number; tag: string }, folders: ReadonlyArray<readonly ['inbox' | 'junk', number]>): Promise<void> {
  for (const [folder, daysAgo] of folders) {
    const messageId = `<w${++planted}-${o.tag}@acme.test>`;
    const at = o.now - daysAgo * DAY;
    await db.insertInto('warmup_mail').values({ id: newId(at, random), pool: 'default', kind: 'first', message_id: messageId, sender_mailbox_id: o.mailbox, sender_address: o.from, receiver_address: 'x@b.example', planned_at: new Date(at), sent_at: new Date(at) }).execute();
    await recordWarmupReceipt(db, { pool: 'default', kind: 'first', messageId, senderAddress: o.from, receiverMailboxId: o.mailbox, receiverAddress: 'x@b.example', folder, at: at + MIN }, random);
  }
}
let planted = 0;

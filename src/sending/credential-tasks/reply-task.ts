import { sendReply, type ReplyRequest, type ReplySent } from '../reply.ts';
import type { TaskContext } from './task-context.ts';

/**
 * A reply from the inbox, sent by the sender role: sendReply unchanged (its idempotency key in
 * reply_request, its Sent-folder settling, its checks that the mailbox is live and the member's
 * own), on this process's connectors and vault.
 */
export async function runReply(c: TaskContext, req: ReplyRequest): Promise<ReplySent> {
  return sendReply({ db: c.store.db, clock: c.clock, random: c.random, vault: c.vault, ...(c.connectors ? { connectors: c.connectors } : {}), ...(c.replySettle ? { settle: c.replySettle } : {}) }, req);
}

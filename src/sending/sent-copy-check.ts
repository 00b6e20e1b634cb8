import { sql } from 'kysely';
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { Store } from '../store/store.ts';
import type { Transport } from '../mailbox/connectors/connector.ts';

/**
 * Is `serverSavesSent: true` true? For an SMTP mailbox that says its server files the Sent copy,
 * the absence of a copy is what lets a lost answer be retried (SentProof 'provider_copy'); a
 * server that files nothing would turn every crash after a 250 into a duplicate. So the claim is
 * checked against a send the server CONFIRMED (250, recorded sent): once the grace period has
 * passed since it was recorded (the server's filing delay, outbox unknownGraceMs), its copy must
 * be in Sent.
 *   found      the setting is verified (settings.sentCopyCheck.verifiedAt); checked again after
 *              recheckMs, one confirmed send at a time (one IMAP search a day per mailbox).
 *   not found  the server does not file copies: the mailbox is switched to the safe rule
 *              (serverSavesSent false: Cadenza writes the copy before each handover) with a
 *              warning the user sees (settings.sentCopyCheck.warning, the mailbox API's warnings).
 *   unavailable nothing is decided (never guess).
 * Until verified, the outbox does not read absence as proof (outbox providerCopyTrusted): an
 * unknown send of an unverified mailbox becomes possibly sent rather than sent again.
 */

export interface SentCopyCheckState {
  verifiedAt?: number;
  /** The confirmed send last checked (its recording time): the next check takes a later one. */
  checkedThrough?: number;
  switchedAt?: number;
  warning?: string;
}

export const defaultRecheckMs = 24 * 3_600_000;

export type SentCopyCheck = 'skipped' | 'no_candidate' | 'verified' | 'switched' | 'unavailable';

async function stateOf(store: Store, mailboxId: string): Promise<SentCopyCheckState> {
  const row = await store.db.selectFrom('mailbox').select('settings').where('id', '=', mailboxId).executeTakeFirst();
  const s = (row?.settings ?? {}) as { sentCopyCheck?: SentCopyCheckState };
  return s.sentCopyCheck ?? {};
}

/** For the outbox: may the absence of a copy in this mailbox's Sent folder be read as "not accepted"? */
export async function serverCopyVerified(store: Store, mailboxId: string): Promise<boolean> {
  return (await stateOf(store, mailboxId)).verifiedAt !== undefined;
}

// -- name: confirmed-send-to-check
// The newest send the server confirmed under the provider_copy rule, recorded at least graceMs
// ago and after the last one checked (a resend by hand or a send settled from Sent proves nothing new).
const candidateSql = (mailboxId: string, before: number, after: number) => sql<{ message_id: string; updated_at: Date }>`
  select r.message_id, r.updated_at from send_request r
  where r.mailbox_id = ${mailboxId} and r.state = 'sent' and r.proof = 'provider_copy' and not r.manual_resend
    and r.message_id is not null and r.updated_at <= ${new Date(before)} and r.updated_at > ${new Date(after)}
  order by r.updated_at desc
  limit 1`;

// -- name: merge-sent-copy-check
const mergeSql = (mailboxId: string, state: SentCopyCheckState, switchToAppend: boolean) => sql`
  update mailbox set settings = settings || ${JSON.stringify({ sentCopyCheck: state, ...(switchToAppend ? { serverSavesSent: false } : {}) })}::jsonb
  where id = ${mailboxId}`;

export async function checkServerSentCopies(deps: {
  store: Store;
  clock: Clock;
  transport: Transport;
  mailboxId: string;
  graceMs: number;
  recheckMs?: number;
  log?: Logger;
}): Promise<SentCopyCheck> {
  const { store, clock, transport, mailboxId } = deps;
  if (transport.kind !== 'smtp' || transport.sentProof !== 'provider_copy') return 'skipped';
  const now = clock.now();
  const st = await stateOf(store, mailboxId);
  if (st.verifiedAt !== undefined && now - st.verifiedAt < (deps.recheckMs ?? defaultRecheckMs)) return 'skipped';
  const c = (await candidateSql(mailboxId, now - deps.graceMs, st.checkedThrough ?? 0).execute(store.db)).rows[0];
  if (!c) return 'no_candidate';
  const f = await transport.findSent(c.message_id);
  if (f.status === 'unavailable') return 'unavailable';
  const checkedThrough = c.updated_at.getTime();
  if (f.status === 'found') {
    await mergeSql(mailboxId, { ...st, verifiedAt: now, checkedThrough }, false).execute(store.db);
    return 'verified';
  }
  const warning =
    `The server confirmed ${c.message_id} but filed no copy in Sent within ${Math.round(deps.graceMs / 1000)} s, so it does not save sent mail itself: ` +
    'Cadenza now writes the Sent copy (serverSavesSent switched to false).';
  await mergeSql(mailboxId, { ...st, checkedThrough, switchedAt: now, warning }, true).execute(store.db);
  deps.log?.warn({ mailboxId, messageId: c.message_id }, 'serverSavesSent was wrong: switched the mailbox to Cadenza-written Sent copies');
  return 'switched';
}

/**
 * Placement, the store side: counts a member's receipts over 7 and 30 days (warmup_mail rows it
 * sent whose receiver recorded a folder), judges them (assess.ts) and applies the verdict: the
 * member's cap factor and reason, and on a pause the mailbox's own pause (mailbox/health/pause.ts,
 * which takes its queued sends off the plan). A warning set here is lifted here when placement
 * recovers; a pause is never lifted automatically (a person resumes the mailbox).
 */
import { sql } from 'kysely';
import { cadenzaError } from '../../common/errors.ts';
import { pauseMailbox } from '../../mailbox/health/pause.ts';
import { inTx, type Conn } from '../../store/in-tx.ts';
import { assessPlacement, defaultPlacementPolicy, PLACEMENT_REASON_PREFIX, placementOf, type Placement, type PlacementCounts, type PlacementPolicy, type PlacementVerdict } from './assess.ts';

const DAY = 86_400_000;

// -- name: placement-counts
const countsSql = (mailboxId: string, now: number) => sql<PlacementCounts>`
  select
    count(*) filter (where received_folder = 'inbox' and received_at >= ${new Date(now - 7 * DAY)})::int as "inbox7",
    count(*) filter (where received_folder = 'junk' and received_at >= ${new Date(now - 7 * DAY)})::int as "junk7",
    count(*) filter (where received_folder = 'inbox')::int as "inbox30",
    count(*) filter (where received_folder = 'junk')::int as "junk30"
  from warmup_mail
  where sender_mailbox_id = ${mailboxId} and received_folder is not null
    and received_at >= ${new Date(now - 30 * DAY)} and received_at < ${new Date(now)}`;

export async function placementCounts(db: Conn, mailboxId: string, now: number): Promise<PlacementCounts> {
  return (await countsSql(mailboxId, now).execute(db)).rows[0]!;
}

// -- name: placement-days
// Receipts per UTC day over the last 30 days, for the chart.
const daysSql = (mailboxId: string, now: number) => sql<{ day: string; inbox: number; junk: number }>`
  select to_char(received_at at time zone 'UTC', 'YYYY-MM-DD') as day,
    count(*) filter (where received_folder = 'inbox')::int as inbox,
    count(*) filter (where received_folder = 'junk')::int as junk
  from warmup_mail
  where sender_mailbox_id = ${mailboxId} and received_folder is not null
    and received_at >= ${new Date(now - 30 * DAY)} and received_at < ${new Date(now)}
  group by 1 order by 1`;

export interface PlacementDay {
  day: string;
  inbox: number;
  junk: number;
}

/** The last 30 UTC days, oldest first, a day without receipts as zeros. */
export async function placementDays(db: Conn, mailboxId: string, now: number): Promise<PlacementDay[]> {
  const got = new Map((await daysSql(mailboxId, now).execute(db)).rows.map((r) => [r.day, r]));
  return Array.from({ length: 30 }, (_, i) => {
    const day = new Date(now - (29 - i) * DAY).toISOString().slice(0, 10);
    const r = got.get(day);
    return { day, inbox: r?.inbox ?? 0, junk: r?.junk ?? 0 };
  });
}

/** The placement the API shows (7 and 30 days, and per day) with the member's current cap factor and reason. */
export async function placementView(db: Conn, mailboxId: string, now: number): Promise<Placement & { capFactor: number; capReason: string | null; days: PlacementDay[] }> {
  const member = await db.selectFrom('warmup_member').select(['cap_factor', 'cap_reason']).where('mailbox_id', '=', mailboxId).executeTakeFirst();
  return { ...placementOf(await placementCounts(db, mailboxId, now)), capFactor: member?.cap_factor ?? 1, capReason: member?.cap_reason ?? null, days: await placementDays(db, mailboxId, now) };
}

export interface PlacementResult extends PlacementVerdict {
  mailboxId: string;
  health: 'ok' | 'warning' | 'paused' | 'error';
}

export async function evaluatePlacement(db: Conn, mailboxId: string, now: number, policy: PlacementPolicy = defaultPlacementPolicy): Promise<PlacementResult> {
  return inTx(db, async (tx) => {
    const mb = await tx.selectFrom('mailbox').select(['health', 'health_reason']).where('id', '=', mailboxId).forUpdate().executeTakeFirst();
    if (!mb) throw cadenzaError('NOT_FOUND', `mailbox ${mailboxId} not found`, { mailboxId });
    const v = assessPlacement(await placementCounts(tx, mailboxId, now), policy);
    await tx
      .updateTable('warmup_member')
      .set({ cap_factor: v.capFactor, cap_reason: v.verdict === 'ok' ? null : v.reason })
      .where('mailbox_id', '=', mailboxId)
      .execute();
    let health = mb.health;
    if (health === 'paused' || health === 'error') return { mailboxId, health, ...v };
    if (v.verdict === 'pause') {
      await pauseMailbox(tx, mailboxId, v.reason, now);
      health = 'paused';
    } else if (v.verdict === 'lower') {
      // A bounce warning is not overwritten: it says more; the cap factor applies either way.
      if (health === 'ok') await tx.updateTable('mailbox').set({ health: 'warning', health_reason: v.reason }).where('id', '=', mailboxId).execute();
      health = 'warning';
    } else if (health === 'warning' && mb.health_reason?.startsWith(PLACEMENT_REASON_PREFIX)) {
      await tx.updateTable('mailbox').set({ health: 'ok', health_reason: null }).where('id', '=', mailboxId).execute();
      health = 'ok';
    }
    return { mailboxId, health, ...v };
  });
}

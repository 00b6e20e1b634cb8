/**
 * One exchange with a peer, the store side (pure of HTTP: client.ts and routes.ts carry it).
 *
 * The side that calls sends its members, its schedule (first mails it planned to the peer's
 * members that the peer has not accepted yet) and its placement reports of the peer's mail; the
 * side called takes them in one transaction and answers with its own members, which schedule
 * entries it accepted and which not (and why), and its reports. Each side calls on its own
 * schedule, so each side's plan is accepted in its own round trip.
 *
 * Accepting is counting: a receiver takes from a peer at most the capacity it offered per UTC day;
 * entries past it, to an address it does not offer to this peer, or from an address the peer does
 * not list are refused, and the sending side cancels them. A first mail to a peer's member is sent
 * only once accepted (warmup-sender.ts), so the receiving side's offer really bounds what it gets.
 * Replies need no schedule: they answer mail the peer sent.
 */
import { sql } from 'kysely';
import { newId } from '../../common/ids.ts';
import type { Random } from '../../common/random.ts';
import { inTx, type Conn } from '../../store/in-tx.ts';
import { defaultWarmupPlanConfig } from '../plan/types.ts';
import { memberProvider } from '../plan-role.ts';
import { STALE_MS } from '../send/warmup-sender.ts';
import type { Peer } from './peers.ts';
import type { ExchangeAnswer, ExchangeRequest, PlacementReport, RemoteMember, ScheduledSend } from './wire.ts';

const DAY = 86_400_000;

/** What a member offers a peer a day: what it would accept from its own pool (ramp.ts receiveLimit at full volume). */
export function offeredCapacity(target: number): number {
  const c = defaultWarmupPlanConfig;
  return Math.min(200, Math.max(c.minReceive, Math.ceil(target * c.receiveRatio)));
}

// -- name: warmup-federation-offer
// The workspace's members in the peering's pool, with the zone and working hours they keep.
const offerSql = (peer: Peer) => sql<{ email: string; provider: string; settings: unknown; domain_checks: unknown; zone: string; day_start: string | null; day_end: string | null; target: number }>`
  select lower(m.email) as email, m.provider, m.settings, dh.checks as domain_checks, coalesce(m.time_zone, w.time_zone, 'UTC') as zone,
         coalesce(m.settings->'pacing'->>'dayStart', w.settings->'pacing'->>'dayStart') as day_start,
         coalesce(m.settings->'pacing'->>'dayEnd', w.settings->'pacing'->>'dayEnd') as day_end, wm.target
  from warmup_member wm join mailbox m on m.id = wm.mailbox_id join workspace w on w.id = m.workspace_id
  left join domain_health dh on dh.workspace_id = m.workspace_id and dh.purpose = 'sending' and dh.domain = lower(split_part(m.email, '@', 2))
  where wm.workspace_id = ${peer.workspaceId} and wm.pool = ${peer.pool} and m.removed_at is null and m.health not in ('paused', 'error')
  order by m.email limit 2000`;

export async function offerFor(db: Conn, peer: Peer): Promise<RemoteMember[]> {
  const hhmm = (s: string | null, d: string) => (s && /^([01]\d|2[0-3]):[0-5]\d$/.test(s) ? s : d);
  return (await offerSql(peer).execute(db)).rows.map((r) => ({
    address: r.email,
    provider: memberProvider(r, r.email.slice(r.email.lastIndexOf('@') + 1)),
    domain: r.email.slice(r.email.lastIndexOf('@') + 1),
    timeZone: r.zone,
    dayStart: hhmm(r.day_start, '09:00'),
    dayEnd: hhmm(r.day_end, '17:00'),
    capacity: offeredCapacity(r.target),
  }));
}

// -- name: warmup-federation-schedule
const scheduleSql = (peerId: string, now: number) => sql<{ message_id: string; sender_address: string; receiver_address: string; planned_at: Date }>`
  select message_id, sender_address, receiver_address, planned_at from warmup_mail
  where peer_id = ${peerId} and sender_mailbox_id is not null and kind = 'first' and peer_accepted_at is null
    and claimed_at is null and sent_at is null and planned_at > ${new Date(now - STALE_MS)}
  order by planned_at limit 20000`;

export async function scheduleFor(db: Conn, peer: Peer, now: number): Promise<ScheduledSend[]> {
  return (await scheduleSql(peer.id, now).execute(db)).rows.map((r) => ({ messageId: r.message_id, sender: r.sender_address.toLowerCase(), receiver: r.receiver_address.toLowerCase(), at: new Date(r.planned_at).getTime() }));
}

// -- name: warmup-federation-reports
// Where the peer's mail landed here, not yet told.
const reportsSql = (peerId: string) => sql<{ message_id: string; received_folder: 'inbox' | 'junk'; received_at: Date }>`
  select message_id, received_folder, received_at from warmup_mail
  where peer_id = ${peerId} and sender_mailbox_id is null and received_folder is not null and reported_at is null
  order by received_at limit 20000`;

export async function reportsFor(db: Conn, peer: Peer): Promise<PlacementReport[]> {
  return (await reportsSql(peer.id).execute(db)).rows.map((r) => ({ messageId: r.message_id, folder: r.received_folder, at: new Date(r.received_at).getTime() }));
}

async function markReported(db: Conn, peer: Peer, reports: readonly PlacementReport[], now: number): Promise<void> {
  if (reports.length === 0) return;
  await sql`update warmup_mail set reported_at = ${new Date(now)} where peer_id = ${peer.id} and message_id = any(${reports.map((r) => r.messageId)}::text[])`.execute(db);
}

/** The peer's members replace what it offered before (an address it no longer lists is no longer planned to). */
async function replaceMembers(db: Conn, peer: Peer, members: readonly RemoteMember[], now: number): Promise<void> {
  await db.deleteFrom('warmup_remote_member').where('peer_id', '=', peer.id).execute();
  const rows = members.map((m) => ({ peer_id: peer.id, address: m.address.toLowerCase(), provider: m.provider, domain: m.domain, time_zone: m.timeZone, day_start: m.dayStart, day_end: m.dayEnd, capacity: m.capacity, updated_at: new Date(now) }));
  const unique = [...new Map(rows.map((r) => [r.address, r])).values()];
  for (let i = 0; i < unique.length; i += 500) await db.insertInto('warmup_remote_member').values(unique.slice(i, i + 500)).execute();
}

/** The peer's reports of our mail: counted like local receipts (placement/evaluate.ts reads the same columns). The first report wins. */
async function applyReports(db: Conn, peer: Peer, reports: readonly PlacementReport[]): Promise<void> {
  for (const r of reports) {
    await sql`update warmup_mail set received_folder = ${r.folder}, received_at = ${new Date(r.at)}
      where peer_id = ${peer.id} and message_id = ${r.messageId} and sender_mailbox_id is not null and received_folder is null`.execute(db);
  }
}

/** The called side: takes the peer's request in one transaction and builds the answer. */
export async function takeRequest(db: Conn, peer: Peer, req: ExchangeRequest, now: number, random: Random): Promise<ExchangeAnswer> {
  return inTx(db, async (tx) => {
    await replaceMembers(tx, peer, req.members, now);
    await applyReports(tx, peer, req.reports);
    const offer = await offerFor(tx, peer);
    const offered = new Map(offer.map((m) => [m.address, m]));
    const senders = new Set(req.members.map((m) => m.address.toLowerCase()));
    const mailboxOf = new Map((await sql<{ email: string; id: string }>`
      select lower(m.email) as email, m.id from warmup_member wm join mailbox m on m.id = wm.mailbox_id
      where wm.workspace_id = ${peer.workspaceId} and wm.pool = ${peer.pool} and m.removed_at is null`.execute(tx)).rows.map((r) => [r.email, r.id]));
    // What each receiver already accepted from this peer, per UTC day.
    const taken = new Map<string, number>();
    for (const r of (await sql<{ receiver: string; day: string; n: number }>`
      select lower(receiver_address) as receiver, to_char(planned_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as n
      from warmup_mail where peer_id = ${peer.id} and sender_mailbox_id is null and kind = 'first' and planned_at > ${new Date(now - 2 * DAY)}
      group by 1, 2`.execute(tx)).rows) taken.set(`${r.receiver} ${r.day}`, r.n);

    const accepted: string[] = [];
    const refused: ExchangeAnswer['refused'] = [];
    for (const s of req.schedule) {
      const receiver = s.receiver.toLowerCase();
      const member = offered.get(receiver);
      const mailboxId = mailboxOf.get(receiver);
      if (!member || !mailboxId) {
        refused.push({ messageId: s.messageId, reason: 'the receiver is not offered to you' });
        continue;
      }
      if (!senders.has(s.sender.toLowerCase())) {
        refused.push({ messageId: s.messageId, reason: 'the sender is not among the members you listed' });
        continue;
      }
      const k = `${receiver} ${new Date(s.at).toISOString().slice(0, 10)}`;
      const got = await sql<{ id: string }>`
        insert into warmup_mail (id, pool, kind, message_id, sender_address, receiver_mailbox_id, receiver_address, planned_at, peer_id, peer_accepted_at)
        select ${newId(now, random)}, ${peer.pool}, 'first', ${s.messageId}, ${s.sender.toLowerCase()}, ${mailboxId}, ${receiver}, ${new Date(s.at)}, ${peer.id}, ${new Date(now)}
        where ${(taken.get(k) ?? 0) < member.capacity}
        on conflict (message_id) do nothing
        returning id`.execute(tx);
      if (got.rows.length) {
        taken.set(k, (taken.get(k) ?? 0) + 1);
        accepted.push(s.messageId);
        continue;
      }
      // Already accepted (the peer retries after a lost answer), or not: over capacity, or an id taken.
      const known = await tx.selectFrom('warmup_mail').select(['peer_id', 'receiver_address']).where('message_id', '=', s.messageId).executeTakeFirst();
      if (known?.peer_id === peer.id && known.receiver_address.toLowerCase() === receiver) accepted.push(s.messageId);
      else refused.push({ messageId: s.messageId, reason: known ? 'the Message-ID is already used' : `the receiver's capacity for that day (${member.capacity}) is taken` });
    }
    const reports = await reportsFor(tx, peer);
    // Told in this answer; an answer lost on the way costs those reports (placement is a share: a few missing do not move it).
    await markReported(tx, peer, reports, now);
    return { members: offer, accepted, refused, reports };
  });
}

/** The calling side: the peer's answer to what we sent (`sent`), in one transaction. */
export async function takeAnswer(db: Conn, peer: Peer, sent: { schedule: readonly ScheduledSend[]; reports: readonly PlacementReport[] }, ans: ExchangeAnswer, now: number): Promise<{ accepted: number; refused: number }> {
  return inTx(db, async (tx) => {
    await replaceMembers(tx, peer, ans.members, now);
    await applyReports(tx, peer, ans.reports);
    await markReported(tx, peer, sent.reports, now);
    const asked = new Set(sent.schedule.map((s) => s.messageId));
    const ok = ans.accepted.filter((m) => asked.has(m));
    const no = ans.refused.filter((r) => asked.has(r.messageId)).map((r) => r.messageId);
    if (ok.length) await sql`update warmup_mail set peer_accepted_at = ${new Date(now)} where peer_id = ${peer.id} and message_id = any(${ok}::text[])`.execute(tx);
    // Refused: cancelled, as if never planned (its slot goes back to the sender's cap).
    if (no.length) await sql`delete from warmup_mail where peer_id = ${peer.id} and message_id = any(${no}::text[]) and claimed_at is null and sent_at is null`.execute(tx);
    await tx.updateTable('warmup_peer').set({ exchanged_at: new Date(now), failures: 0, retry_at: null, last_error: null }).where('id', '=', peer.id).execute();
    return { accepted: ok.length, refused: no.length };
  });
}

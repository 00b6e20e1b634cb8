/**
 * Warmup mail in the simulation: the run's mailboxes and one peer (a mailbox of another workspace)
 * form a warmup pool, and now and then a mailbox's sync pulls a batch that mixes a warmup mail
 * from the peer (in the inbox or in junk, as a filter left it) with mail a person wrote: a human
 * note from the peer itself (a pool member, so it is verified and must fail) and a prospect's reply
 * to one of the mailbox's delivered steps. The batch goes through the real ingestion pipeline with
 * the real receiving side (warmup/receive/recogniser.ts), as the composition root wires them.
 *
 * Checked after each batch (checkWarmupBatch):
 *  warmup-hidden     the warmup mail is taken aside: its placement recorded as the folder it landed
 *                    in, no message row (so no inbox view, analytics, webhook or CRM activity), no
 *                    engine event, and a junk one moved to the inbox;
 *  reply-not-warmup  mail a person wrote is never taken for warmup: it has its message row, and a
 *                    prospect's reply is threaded to its enrollment.
 *  peer-left-quiet   federation: a peer installation's member also writes (its mail marked with the
 *                    pair key both installations derive), and the peer leaves at a random batch;
 *                    from then on nothing of ours to its members waits unsent (planned mail
 *                    cancelled), and its mail still in flight (within the grace) is taken aside
 *                    without a reply. After the grace it sends no more.
 *
 * The local peer's warmup mail is planted as the planner plants it (a row of the sending mailbox,
 * so its receipts are its placement), over a history of the last 10 days drawn for the run (mostly
 * in the inbox, or a share in junk that warrants a warning or a pause). The scheduler's placement
 * pass (warmup/placement/placement-role.ts) runs as in the runtime, and after each pass
 * (checkPlacementPass):
 *  placement-judged  every member's cap factor is its verdict's on the receipts at that time, a
 *                    member judged for a pause is paused, one judged for a lower cap is no longer
 *                    'ok', and a pass that changed no member's health, reason or cap factor
 *                    recorded no "mailbox needs attention" notification (told once, not per pass).
 */
import { sql } from 'kysely';
import { newId } from '../common/ids.ts';
import type { Random } from '../common/random.ts';
import { ingestBatch, type IngestDeps, type IngestReport, type WarmupFolders } from '../ingest/pipeline.ts';
import { parseMail } from '../ingest/parse/parse-mail.ts';
import type { Classification } from '../ingest/types.ts';
import type { SyncBatch } from '../mailbox/sync/source.ts';
import type { EnrollmentService } from '../sequence/enrollment-service.ts';
import type { Store } from '../store/store.ts';
import { federationIdentity, pairKey } from '../warmup/federation/identity.ts';
import { endPeering, LEFT_GRACE_MS } from '../warmup/federation/peers.ts';
import { recordWarmupReceipt, setWarmup } from '../warmup/membership.ts';
import { assessPlacement } from '../warmup/placement/assess.ts';
import { placementCounts } from '../warmup/placement/evaluate.ts';
import { evaluateWarmupPlacements } from '../warmup/placement/placement-role.ts';
import { warmupRecogniser } from '../warmup/receive/recogniser.ts';
import { warmupPoolKey, writeWarmup } from '../warmup/text/marker.ts';
import { InvariantViolation } from './invariants.ts';
import type { SimClock } from './sim-clock.ts';

export const PEER = 'peer@warmup-peer.test';
/** The simulated installation's master key: the pool's key is derived from it, as in the runtime. */
const MASTER = Buffer.alloc(32, 0x5a);
const KEY = warmupPoolKey(MASTER, 'default');
/** This installation's federation identity and a peer installation's, with one member of its pool. */
const OURS = federationIdentity(MASTER, 'https://cadenza.sim.test', 'sim');
const REMOTE = federationIdentity(Buffer.alloc(32, 0x6b), 'https://remote.sim.test', 'remote');
export const FAR = 'far@remote-peer.test';
/** What the peer marks its mail with: the pair key, derived on its side from our card. */
const FAR_KEY = pairKey(REMOTE, OURS.card);

/** The peer (its own workspace) and every mailbox of the run join the pool. */
export async function joinWarmupPool(store: Store, clock: SimClock, random: Random, mailboxes: ReadonlyArray<{ id: string; workspaceId: string; email: string }>): Promise<void> {
  const ws = newId(clock.now(), random);
  await store.db.insertInto('workspace').values({ id: ws, name: 'warmup peer', time_zone: 'UTC' }).execute();
  const peer = newId(clock.now(), random);
  await store.db.insertInto('mailbox').values({ id: peer, workspace_id: ws, email: PEER, provider: 'smtp_imap', settings: JSON.stringify({}), time_zone: 'UTC' }).execute();
  await setWarmup(store.db, ws, peer, { enabled: true }, clock.now() - 30 * DAY);
  // The peer's placement so far: 8 to 20 receipts over the last 10 days, a share of them in junk
  // (none in half the runs, else up to 70%: a warning or a pause for the first placement pass).
  const p = random.fork('placement-history');
  const junkShare = p.next() < 0.5 ? 0 : p.next() * 0.7;
  const first = mailboxes[0];
  for (let i = p.int(8, 20); first && i > 0; i--) {
    const at = clock.now() - p.int(1, 10 * DAY);
    const messageId = `<warmup-history-${i}@warmup-peer.test>`;
    await plantPeerMail(store, peer, messageId, first.email, at, p);
    await recordWarmupReceipt(store.db, { pool: 'default', kind: 'first', messageId, senderAddress: PEER, receiverMailboxId: first.id, receiverAddress: first.email, folder: p.next() < junkShare ? 'junk' : 'inbox', at: at + 60_000 }, p);
  }
  for (const m of mailboxes) await setWarmup(store.db, m.workspaceId, m.id, { enabled: true }, clock.now());
  // The run's workspace peered with another installation (both sides added each other: active).
  const workspaceId = mailboxes[0]?.workspaceId;
  if (!workspaceId) return;
  const peerId = newId(clock.now(), random);
  await store.db.insertInto('warmup_peer').values({ id: peerId, workspace_id: workspaceId, name: REMOTE.card.name, url: REMOTE.card.url, sign_key: REMOTE.card.signKey, agree_key: REMOTE.card.agreeKey, state: 'active', added_at: new Date(clock.now()), activated_at: new Date(clock.now()) }).execute();
  await store.db.insertInto('warmup_remote_member').values({ peer_id: peerId, address: FAR, provider: 'zoho', domain: 'remote-peer.test', time_zone: 'UTC', day_start: '09:00', day_end: '17:00', capacity: 20, updated_at: new Date(clock.now()) }).execute();
}

const DAY = 86_400_000;

/** The local peer's warmup mail to `to`, as the planner writes it: a row of the sending mailbox, sent at `at`. */
async function plantPeerMail(store: Store, peerMailbox: string, messageId: string, to: string, at: number, random: Random): Promise<void> {
  await store.db.insertInto('warmup_mail').values({ id: newId(at, random), pool: 'default', kind: 'first', message_id: messageId, sender_mailbox_id: peerMailbox, sender_address: PEER, receiver_address: to, planned_at: new Date(at), sent_at: new Date(at) }).execute();
}

/** What one batch holds, to check against what the pipeline did. */
export interface WarmupBatch {
  mailboxId: string;
  at: number;
  warmup: { key: string; messageId: string; folder: 'inbox' | 'junk'; from: string };
  /** The federation peer: its id, and when it left (null while active). */
  peer: { id: string; leftAt: number | null } | null;
  human: Array<{ key: string; messageId: string; enrollmentId: string | null }>;
}

const human: Classification = { label: 'human_reply', confidence: 0.9, reason: 'simulated: a person wrote it', rung: 'default' };

function raw(h: { from: string; fromName: string; to: string; toName: string; subject: string; messageId: string; inReplyTo?: string; at: number; body: string }): Uint8Array {
  const lines = [
    `From: ${h.fromName} <${h.from}>`,
    `To: ${h.toName} <${h.to}>`,
    `Subject: ${h.subject}`,
    `Message-ID: ${h.messageId}`,
    ...(h.inReplyTo ? [`In-Reply-To: ${h.inReplyTo}`, `References: ${h.inReplyTo}`] : []),
    `Date: ${new Date(h.at).toUTCString().replace('GMT', '+0000')}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    h.body,
  ];
  return new TextEncoder().encode(lines.join('\r\n'));
}

/**
 * Pulls one batch into `mailbox`: a warmup mail from the peer, maybe a human note from the peer,
 * maybe a prospect's reply to `replyTo` (a delivered step of this mailbox). `recognise: false` is
 * the planted fault: the pipeline runs without the receiving side.
 */
export async function pullWarmupBatch(
  d: { store: Store; service: EnrollmentService; clock: SimClock; random: Random; recognise: boolean },
  mailbox: { id: string; workspaceId: string; email: string },
  n: number,
  replyTo: { messageId: string; enrollmentId: string; from: string } | null,
): Promise<{ batch: WarmupBatch; report: IngestReport; moved: Set<string> }> {
  const r = d.random;
  const now = d.clock.now();
  const folder = r.next() < 0.3 ? 'junk' : 'inbox';
  // The federation peer: it may leave now (either side can, at once); its member writes while the
  // peering is active or its mail is still in flight (the grace), else the local peer writes.
  const p = await d.store.db.selectFrom('warmup_peer').select(['id', 'state', 'left_at']).where('workspace_id', '=', mailbox.workspaceId).executeTakeFirst();
  let peer = p ? { id: p.id, leftAt: p.left_at ? p.left_at.getTime() : null } : null;
  if (peer && peer.leftAt === null && r.next() < 0.04) {
    await endPeering(d.store.db, peer.id, r.next() < 0.5 ? 'us' : 'peer', now);
    peer = { id: peer.id, leftAt: now };
  }
  const remote = peer !== null && (peer.leftAt === null || now - peer.leftAt < LEFT_GRACE_MS) && r.next() < 0.4;
  const from = remote ? FAR : PEER;
  const wid = `<warmup-${n}@${remote ? 'remote-peer.test' : 'warmup-peer.test'}>`;
  const text = writeWarmup(remote ? FAR_KEY : KEY, (['en', 'de', 'fr', 'es'] as const)[r.int(0, 3)]!, { from, to: mailbox.email, messageId: wid, fromName: 'Robin', toName: 'Sam' });
  const messages: SyncBatch['messages'] = [{ key: `${folder}:${n}:1`, folder, raw: raw({ from, fromName: 'Robin Peer', to: mailbox.email, toName: 'Sam Rep', subject: text.subject ?? '', messageId: wid, at: now, body: text.body }), threadId: null, receivedAt: now }];
  if (!remote) {
    const peerMailbox = await d.store.db.selectFrom('mailbox').select('id').where('email', '=', PEER).executeTakeFirstOrThrow();
    await plantPeerMail(d.store, peerMailbox.id, wid, mailbox.email, now, r.fork(`planted:${n}`));
  }
  const batch: WarmupBatch = { mailboxId: mailbox.id, at: now, warmup: { key: messages[0]!.key, messageId: wid, folder, from }, peer, human: [] };
  if (r.next() < 0.5) {
    const id = `<note-${n}@warmup-peer.test>`;
    messages.push({ key: `inbox:${n}:2`, folder: 'inbox', raw: raw({ from: PEER, fromName: 'Robin Peer', to: mailbox.email, toName: 'Sam Rep', subject: 'Lunch on Friday?', messageId: id, at: now, body: 'Hi Sam,\r\n\r\nlunch on Friday at the usual place? Robin' }), threadId: null, receivedAt: now });
    batch.human.push({ key: `inbox:${n}:2`, messageId: id, enrollmentId: null });
  }
  if (replyTo) {
    const id = `<sim-reply-${n}@prospect.test>`;
    messages.push({ key: `inbox:${n}:3`, folder: 'inbox', raw: raw({ from: replyTo.from, fromName: 'Pat Prospect', to: mailbox.email, toName: 'Sam Rep', subject: 'Re: your note', messageId: id, inReplyTo: replyTo.messageId, at: now, body: 'Thanks, happy to talk next week.' }), threadId: null, receivedAt: now });
    batch.human.push({ key: `inbox:${n}:3`, messageId: id, enrollmentId: replyTo.enrollmentId });
  }
  // Shuffled: warmup mail is not always first.
  for (let i = messages.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [messages[i], messages[j]] = [messages[j]!, messages[i]!];
  }
  const moved = new Set<string>();
  const folders: WarmupFolders = {
    moveToInbox: async (key) => (moved.add(key), { status: 'done', key: `moved:${key}` }),
    flag: async () => ({ status: 'done', key: null }),
    markRead: async () => ({ status: 'done', key: null }),
  };
  const deps: IngestDeps = {
    store: d.store,
    service: d.service,
    clock: d.clock,
    random: r,
    steps: { parse: async (b) => ({ ok: true, mail: await parseMail(b) }), newText: (m) => m.text, classify: () => human },
    ...(d.recognise ? { warmup: warmupRecogniser({ db: d.store.db, master: MASTER, clock: d.clock, random: r, federation: OURS, reply: { share: 0.3 } }) } : {}),
  };
  const report = await ingestBatch(deps, { id: mailbox.id, workspaceId: mailbox.workspaceId }, { messages, problems: [], cursor: { warmup: n }, mode: 'incremental' }, { folders });
  return { batch, report, moved };
}

/** The two invariants above, for one batch just ingested. */
export async function checkWarmupBatch(store: Store, b: WarmupBatch, report: IngestReport, moved: Set<string>): Promise<void> {
  const w = b.warmup;
  const rows = await store.db.selectFrom('message').select(['id', 'enrollment_id']).where('message_id', '=', w.messageId).execute();
  if (rows.length > 0) throw new InvariantViolation('warmup-hidden', `warmup mail ${w.messageId} has a message row (inbox view, analytics, webhooks): ${JSON.stringify(rows)}`);
  const events = await sql<{ n: number }>`select count(*)::int as n from event where at >= ${new Date(b.at)} and payload::text like ${`%${w.messageId}%`}`.execute(store.db);
  if (Number(events.rows[0]?.n ?? 0) > 0) throw new InvariantViolation('warmup-hidden', `warmup mail ${w.messageId} reached the engine's journal`);
  if (!report.warmup.includes(w.key)) throw new InvariantViolation('warmup-hidden', `warmup mail ${w.messageId} in mailbox ${b.mailboxId} was not taken aside by the receiving side`);
  const mail = await store.db.selectFrom('warmup_mail').select(['received_folder', 'receiver_mailbox_id']).where('message_id', '=', w.messageId).executeTakeFirst();
  if (mail?.received_folder !== w.folder || mail.receiver_mailbox_id !== b.mailboxId) throw new InvariantViolation('warmup-hidden', `warmup mail ${w.messageId} landed in ${w.folder} of ${b.mailboxId} but its placement reads ${JSON.stringify(mail ?? null)}`);
  if (w.folder === 'junk' && !moved.has(w.key)) throw new InvariantViolation('warmup-hidden', `warmup mail ${w.messageId} was left in junk`);
  if (b.peer?.leftAt != null) {
    const waiting = await sql<{ message_id: string }>`
      select message_id from warmup_mail where peer_id = ${b.peer.id} and sender_mailbox_id is not null and sent_at is null and claimed_at is null`.execute(store.db);
    if (waiting.rows.length) throw new InvariantViolation('peer-left-quiet', `the peer left at ${new Date(b.peer.leftAt).toISOString()} but mail to its members still waits: ${waiting.rows.map((x) => x.message_id).join(', ')}`);
    if (w.from === FAR) {
      const replies = await store.db.selectFrom('warmup_mail').select('message_id').where('kind', '=', 'reply').where('in_reply_to', '=', w.messageId).execute();
      if (replies.length) throw new InvariantViolation('peer-left-quiet', `a reply was planned to ${w.messageId}, mail of a peer that left`);
    }
  }
  for (const h of b.human) {
    if (report.warmup.includes(h.key)) throw new InvariantViolation('reply-not-warmup', `mail a person wrote (${h.messageId}) was taken for warmup`);
    const row = await store.db.selectFrom('message').select('enrollment_id').where('message_id', '=', h.messageId).where('mailbox_id', '=', b.mailboxId).executeTakeFirst();
    if (!row) throw new InvariantViolation('reply-not-warmup', `mail a person wrote (${h.messageId}) has no message row: it is missing from the inbox`);
    if (h.enrollmentId !== null && row.enrollment_id !== h.enrollmentId) throw new InvariantViolation('reply-not-warmup', `prospect's reply ${h.messageId} is threaded to ${row.enrollment_id}, not its enrollment ${h.enrollmentId}`);
  }
}

type MemberState = { mailbox_id: string; workspace_id: string; health: string; health_reason: string | null; cap_factor: number };

async function memberStates(store: Store): Promise<MemberState[]> {
  return store.db.selectFrom('warmup_member').innerJoin('mailbox', 'mailbox.id', 'warmup_member.mailbox_id').select(['warmup_member.mailbox_id', 'mailbox.workspace_id', 'mailbox.health', 'mailbox.health_reason', 'warmup_member.cap_factor']).orderBy('warmup_member.mailbox_id').execute();
}

async function attentionCount(store: Store): Promise<number> {
  return Number((await sql<{ n: number }>`select count(*)::int as n from notification_event where kind = 'mailbox_attention'`.execute(store.db)).rows[0]?.n ?? 0);
}

/**
 * The scheduler's placement pass as the runtime runs it, then placement-judged (file comment).
 * What it returns: the members whose health or cap factor the pass changed, or null when another
 * (crashed) process still held the lease.
 */
export async function runPlacementPass(store: Store, clock: SimClock, owner: string): Promise<{ changed: number; members: number } | null> {
  const before = await memberStates(store);
  const told = await attentionCount(store);
  const results = await evaluateWarmupPlacements({ store, clock, owner });
  if (results === null) return null;
  const after = await memberStates(store);
  const was = new Map(before.map((m) => [m.mailbox_id, m]));
  let changed = 0;
  for (const m of after) {
    const v = assessPlacement(await placementCounts(store.db, m.mailbox_id, clock.now()));
    if (m.cap_factor !== v.capFactor) throw new InvariantViolation('placement-judged', `warmup member ${m.mailbox_id} has cap factor ${m.cap_factor} after the placement pass, its verdict says ${v.capFactor} (${v.reason})`);
    const b = was.get(m.mailbox_id);
    if (v.verdict === 'pause' && b && b.health !== 'error' && m.health !== 'paused') throw new InvariantViolation('placement-judged', `warmup member ${m.mailbox_id} is ${m.health} after a placement pass that judged a pause (${v.reason})`);
    if (v.verdict === 'lower' && m.health === 'ok') throw new InvariantViolation('placement-judged', `warmup member ${m.mailbox_id} is ok after a placement pass that lowered its cap (${v.reason})`);
    if (!b || b.health !== m.health || b.health_reason !== m.health_reason || b.cap_factor !== m.cap_factor) changed++;
  }
  const added = (await attentionCount(store)) - told;
  if (added > changed) throw new InvariantViolation('placement-judged', `the placement pass recorded ${added} mailbox-attention notifications but changed ${changed} members: told again without a change`);
  return { changed, members: after.length };
}

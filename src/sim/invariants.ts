import { sql } from 'kysely';
import { isAllowed, parseWindow, type CalendarSpec } from '../calendar/index.ts';
import type { Claim } from '../sending/outbox.ts';
import type { Store } from '../store/store.ts';
import type { Delivery, SimMailServer } from './mail-server.ts';
import { pacingViolation, refusalViolation, type SimPacing } from './pacing-check.ts';
import { armWindow } from '../sequence/definition-experiments.ts';
import { armHoursOf } from './experiments.ts';
import type { SequenceSettings } from '../sequence/sequence-repo.ts';
import { calendarCountry, calendarRegion } from '../sequence/sql/calendar-country.ts';

/**
 * The promises, checked against what the store holds and what reached the simulated mail server.
 *
 *  1 at-most-once     no (enrollment, step) delivered twice, counted from the Sent folders.
 *  2 never-after-stop no delivery for an enrollment whose stop (any move to a final state) was
 *                     committed to the journal before the message was handed over.
 *  3 human-time       every active enrollment's due time (and a paused one's kept due time) is
 *                     allowed by its calendar: window, weekday, holidays; every claimed send was due.
 *  4 nothing-lost     every live enrollment waits for something that will come: its timer, a
 *                     queued/in-flight/unknown send request for its step, an open task for its step.
 *  5 opt-out          no live enrollment on a suppressed address (promise 6).
 * 11 no-task-after-stop  no open call or manual task on an enrollment that ended by a reply, bounce,
 *                     opt-out, stop, failure or move (but a replied one's notice of the reply, a
 *                     reply rule's), nor on any enrollment of a suppressed address: the stop
 *                     cancels open tasks as it cancels queued sends.
*13 one-arm        no enrollment has send requests or tasks for steps of two arms of one branch.
 *12 call-tries       a call task is called at most 1 + its step's retry attempts times (once with no
 *                     rule), counted from the journal, and its own counter of tries agrees.
 *14 reply-rules      (after the drain) a reply with an intent its sequence has a rule for stopped
 *                     the enrollment; a notify rule made exactly one notice task; a move rule moved
 *                     it exactly once, to the rule's sequence, its first step due no earlier than
 *                     the rule's delay, moved_to pointing there (or left the refusal's reason).
 *15 arm-winner      once a sequence experiment's winner is declared, every enrollment keeps the
 *                     arms it had, and each one enrolled since runs the winner while the
 *                     experiment has that arm (checked as the simulation enrolls).
 *  8 pacing           each mailbox's counted sends keep its daily cap (its local day, ramp
 *                     included), hourly ceiling, minimum gap and working days; a claim refused for
 *                     a budget is refused by sends that count (pacing-check.ts).
 *  9 reply-beats-follow-up  no step is handed over after a reply that was in the mailbox (landed
 *                     since the previous step) when the sender took its mailbox last look, unless
 *                     the look itself failed and its bound on failed looks was spent.
 * 10 possibly-sent-never-retried  a request settled as possibly_sent (its send may have gone and
 *                     nothing proves otherwise) is never claimed again, except by a resend by hand.
 * and, once the run has drained (finalCheck):
 *  6 records-match    every delivery is recorded as sent (or possibly_sent) under its Message-ID,
 *                     with one outbound message row, and every request recorded as sent was
 *                     delivered (a possibly_sent one may or may not have been: that is its meaning).
 *  7 settled          no request left in flight or unknown.
 */

export type InvariantName =
  | 'at-most-once'
  | 'never-after-stop'
  | 'human-time'
  | 'nothing-lost'
  | 'opt-out'
  | 'records-match'
  | 'settled'
  | 'pacing'
  | 'reply-beats-follow-up'
  | 'possibly-sent-never-retried'
  | 'no-task-after-stop'
  | 'call-tries'
  /** 13: no enrollment runs steps of two arms of one branch (issue 18). */
  | 'one-arm'
  /** 3b: a step whose experiment arm sets send hours is due inside them (issue 18, sequence/arm-view.ts). */
  | 'arm-hours'
  /** 14: a reply's intent rule (stop_rules.on_reply) is carried out exactly once (issue 18). */
  | 'reply-rules'
  /** 15: after a sequence experiment's winner is declared, enrollments keep their arms and new ones run the winner (issue 18, simulation.ts declareWinner). */
  | 'arm-winner'
  /** sim/warmup.ts: warmup mail is taken aside, recorded, and reaches nothing user-facing. */
  | 'warmup-hidden'
  /** sim/warmup.ts: mail a person wrote is never taken for warmup. */
  | 'reply-not-warmup'
  /** sim/warmup.ts: once a federation peer left, nothing of ours to its members waits to be sent, and its mail in flight gets no reply. */
  | 'peer-left-quiet'
  /** sim/warmup.ts: after the scheduler's placement pass every warmup member's cap and health follow its verdict, and nothing unchanged is told again. */
  | 'placement-judged'
  /** sim/crm.ts: no activity is in the CRM twice. */
  | 'crm-once'
  /** sim/crm.ts: the CRM's request limit is never exceeded. */
  | 'crm-limit'
  /** sim/crm.ts: at the end, every activity is written (for a CRM contact) or skipped (for anyone else). */
  | 'crm-nothing-lost';

export class InvariantViolation extends Error {
  readonly code = 'SIM_INVARIANT';
  constructor(
    readonly invariant: InvariantName,
    readonly detail: string,
  ) {
    super(`${invariant}: ${detail}`);
    this.name = 'InvariantViolation';
  }
}

/** The owner's notice of a reply (a reply rule's notify, sequence/transition.ts): the one task a replied enrollment keeps open. */
const NOTICE = sql`(t.kind = 'manual' and t.title like '% reply from %: follow up')`;

const finalStates = `('replied', 'bounced', 'unsubscribed', 'finished', 'stopped', 'failed', 'moved')`;
/** The final states a stop reaches (every final state but finished: a call that does not hold the sequence may outlive its end). */
const stoppedStates = `('replied', 'bounced', 'unsubscribed', 'stopped', 'failed', 'moved')`;

/**
 * What the simulation needs from the store to wake its actors: the next timer, each mailbox's next
 * planned send, whether a queued request waits for the dispatcher, and the next daily re-plan.
 */
export interface StoreView {
  nextTimer: number | null;
  queues: Map<string, number>;
  planNeeded: boolean;
  replanAt: number | null;
}

/** The states in which a claimed request counts against its mailbox's budget (dispatch/reserve.ts). */
const countedStates = `('in_flight', 'sent', 'unknown', 'possibly_sent', 'failed')`;


export class InvariantChecker {
  /** Invariant evaluations so far (one per invariant per step it was evaluated on, one per delivery). */
  checks = 0;
  private readonly firstDelivery = new Map<string, Delivery>();
  private readonly possiblySentIds = new Set<string>();
  private seenDeliveries = 0;
  private since = -Infinity;

  private readonly pacing: Map<string, SimPacing>;

  constructor(
    private readonly store: Store,
    private readonly server: SimMailServer,
    pacing: readonly SimPacing[] = [],
  ) {
    this.pacing = new Map(pacing.map((p) => [p.mailboxId, p]));
  }

  /** A paced claim refused at `now` for `reason` (8): a budget must be filled by sends that count. */
  async checkRefusal(mailboxId: string, reason: string, now: number): Promise<void> {
    const p = this.pacing.get(mailboxId);
    if (!p) return;
    this.checks++;
    const v = refusalViolation(p, await this.counted(mailboxId), now, reason);
    if (v) throw new InvariantViolation('pacing', `mailbox ${mailboxId}: ${v}`);
  }

  private async counted(mailboxId: string): Promise<number[]> {
    const rows = await sql<{ at: Date }>`
      select claimed_at as at from send_request
      where mailbox_id = ${mailboxId} and claimed_at is not null and state in ${sql.raw(countedStates)}`.execute(this.store.db);
    return rows.rows.map((r) => new Date(r.at).getTime());
  }

  /** A request the outbox settled as possibly_sent: from now on it may only be claimed for a resend by hand (9). */
  possiblySent(requestId: string): void {
    this.possiblySentIds.add(requestId);
  }

  /** Every claim handed out must have been due (3), and never a possibly-sent request sent again automatically (9). */
  checkClaim(c: Claim, now: number): void {
    this.checks += 2;
    if (this.possiblySentIds.has(c.requestId) && !c.manualResend) {
      throw new InvariantViolation('possibly-sent-never-retried', `request ${c.requestId} (${c.messageId}) was settled as possibly sent and is claimed again (attempt ${c.attempts})`);
    }
    if (c.dueAt > now) throw new InvariantViolation('human-time', `request ${c.requestId} claimed at ${iso(now)} before it was due (${iso(c.dueAt)})`);
  }

  /**
   * After each step. The store-based checks (3-5) depend only on the store's contents, so they are
   * re-evaluated only after a step that wrote to it (`dirty`), in one round trip that also returns
   * when the next timer and each mailbox's next queued request fall due (the simulation wakes its
   * scheduler and senders from that). Deliveries are checked as they come.
   */
  /** 9: called at the handover, after the sender's mailbox last look at the same instant. */
  async checkMailboxLook(claim: Claim, lookAt: number, boundReached: boolean, skewMs: number): Promise<void> {
    this.checks++;
    if (boundReached) return;
    const e = await this.store.db.selectFrom('enrollment').select('last_step_at').where('id', '=', claim.enrollmentId).executeTakeFirst();
    // The look's own scope: follow-ups (a previous step) and leads who wrote before (a stored inbound row).
    const wrote = await this.store.db.selectFrom('message').select('id').where('mailbox_id', '=', claim.mailboxId).where('direction', '=', 'inbound').where('from_addr', '=', claim.to).executeTakeFirst();
    if (!e?.last_step_at && !wrote) return;
    const since = e?.last_step_at ? e.last_step_at.getTime() - skewMs : -Infinity;
    const hit = this.server.landedFor(claim.enrollmentId).find((m) => m.at <= lookAt && m.at >= since);
    if (hit) {
      throw new InvariantViolation('reply-beats-follow-up', `step ${claim.stepId} of enrollment ${claim.enrollmentId} (${claim.messageId}) was handed over at ${new Date(lookAt).toISOString()}, after its reply ${hit.messageId} was in the mailbox (since ${new Date(hit.at).toISOString()})`);
    }
  }

  async afterStep(now: number, dirty: boolean): Promise<StoreView | null> {
    await this.checkDeliveries();
    if (!dirty) return null;
    const view = await this.checkStore(this.since);
    this.since = now;
    return view;
  }

  private async checkDeliveries(): Promise<void> {
    const all = this.server.deliveries;
    for (; this.seenDeliveries < all.length; this.seenDeliveries++) {
      const d = all[this.seenDeliveries]!;
      this.checks += 2;
      const key = `${d.enrollmentId}:${d.stepId}`;
      const first = this.firstDelivery.get(key);
      if (first) {
        throw new InvariantViolation(
          'at-most-once',
          `step ${d.stepId} of enrollment ${d.enrollmentId} delivered twice: ${first.messageId} at ${iso(first.at)} and ${d.messageId} at ${iso(d.at)}`,
        );
      }
      this.firstDelivery.set(key, d);
      if (this.pacing.has(d.mailboxId)) {
        // 8: a message that reached a server was paid for: its request holds a counted reservation.
        this.checks++;
        const r = await this.store.db.selectFrom('send_request').select(['state', 'claimed_at']).where('id', '=', d.requestId).executeTakeFirst();
        if (!r || r.claimed_at === null || r.claimed_at.getTime() > d.at || !countedStates.includes(`'${r.state}'`)) {
          throw new InvariantViolation('pacing', `${d.messageId} reached the server at ${iso(d.at)} without a reservation in its mailbox's budget (request ${r ? `${r.state}, claimed_at ${r.claimed_at ? iso(r.claimed_at.getTime()) : 'null'}` : 'missing'})`);
        }
      }
      const stop = await sql<{ id: number; type: string; at: Date; to: string }>`
        select id, type, at, payload->>'to' as "to" from event
        where enrollment_id = ${d.enrollmentId} and id <= ${d.journalMark} and type not like '%.ignored'
          and payload->>'to' in ${sql.raw(finalStates)}
        order by id limit 1`.execute(this.store.db);
      const s = stop.rows[0];
      if (s) {
        throw new InvariantViolation(
          'never-after-stop',
          `enrollment ${d.enrollmentId} step ${d.stepId} delivered at ${iso(d.at)} (${d.messageId}) after its stop '${s.to}' (${s.type}) was recorded at ${iso(s.at.getTime())}`,
        );
      }
    }
  }

  private async checkStore(since: number): Promise<StoreView> {
    this.checks += 4;
    const rows = await sql<{ kind: 'due' | 'lost' | 'suppressed' | 'open-task' | 'timer' | 'queue' | 'plan' | 'claim'; d: Record<string, unknown> }>`
      -- 3: due times written since the last check
      select 'due' as kind, json_build_object('id', e.id, 'state', e.state,
               'at', case when e.state = 'active' then e.due_at else e.paused_due_at end,
               'zone', e.time_zone, 'country', ${calendarCountry}, 'region', ${calendarRegion}, 'window', s.send_window, 'settings', s.settings,
               'arms', e.experiment_arms, 'step', st.key) as d
      from enrollment e join lead l on l.id = e.lead_id join sequence s on s.id = e.sequence_id left join step st on st.id = e.next_step_id
      where ((e.state = 'active' and e.waiting_for = 'timer' and e.due_at is not null)
             or (e.state = 'paused' and e.paused_due_at > 'epoch'::timestamptz))
        and e.updated_at >= ${new Date(Number.isFinite(since) ? since : 0)}
      union all
      -- 4: live enrollments waiting for nothing that will come
      select 'lost', json_build_object('id', e.id, 'state', e.state, 'waiting_for', e.waiting_for, 'step', e.next_step_id,
               'request', (select string_agg(r.state, ',') from send_request r where r.enrollment_id = e.id and r.step_id = e.next_step_id))
      from enrollment e
      where (e.state = 'active' and not (
              (e.waiting_for = 'timer' and e.due_at is not null)
              or (e.waiting_for = 'send' and exists (select 1 from send_request r where r.enrollment_id = e.id and r.step_id = e.next_step_id and r.state in ('queued', 'in_flight', 'unknown')))
              or (e.waiting_for = 'task' and exists (select 1 from task t where t.enrollment_id = e.id and t.step_id = e.next_step_id and t.state = 'open'))))
         or (e.state = 'paused' and (e.waiting_for = 'send'
              or (e.waiting_for = 'task' and not exists (select 1 from task t where t.enrollment_id = e.id and t.step_id = e.next_step_id and t.state = 'open'))))
      union all
      -- 5: live enrollments on a suppressed address
      select 'suppressed', json_build_object('id', e.id, 'state', e.state, 'reason', s.reason)
      from enrollment e
      join lead l on l.id = e.lead_id
      join suppression s on s.workspace_id = l.workspace_id and s.email_norm = l.email_norm
      where e.state in ('active', 'paused')
      union all
      -- 11: open tasks of stopped enrollments or suppressed addresses
      select 'open-task', json_build_object('id', e.id, 'state', e.state, 'task', t.id, 'kind', t.kind,
               'suppressed', (select s.reason from suppression s where s.workspace_id = l.workspace_id and s.email_norm = l.email_norm))
      from task t join enrollment e on e.id = t.enrollment_id join lead l on l.id = e.lead_id
      where t.state = 'open' and ((e.state in ${sql.raw(stoppedStates)} and not (e.state = 'replied' and ${NOTICE}))
        or exists (select 1 from suppression s where s.workspace_id = l.workspace_id and s.email_norm = l.email_norm))

      union all
      -- not checks: when the next timer and each mailbox's next queued send fall due
      select 'timer', json_build_object('at', min(due_at)) from enrollment where state in ('active', 'paused') and due_at is not null
      union all
      select 'queue', json_build_object('mailbox', mailbox_id, 'at', min(send_at)) from send_request
      where state = 'queued' and mailbox_id is not null and send_at is not null and send_at >= due_at group by mailbox_id
      union all
      -- (the dispatcher's own condition, dispatch/sql.ts toPlanSql)
      select 'plan', json_build_object(
               'needed', exists (select 1 from send_request where state = 'queued' and mailbox_id is not null
                                   and ((send_at is null and planned_at is null) or send_at < due_at)),
               'replan', (select min(replan_at) from mailbox_plan))
      union all
      -- 8: the sends each mailbox's budget counts
      select 'claim', json_build_object('mailbox', mailbox_id, 'at', claimed_at) from send_request
      where claimed_at is not null and state in ${sql.raw(countedStates)}`.execute(this.store.db);
    const view: StoreView = { nextTimer: null, queues: new Map(), planNeeded: false, replanAt: null };
    const claims = new Map<string, number[]>();
    for (const { kind, d } of rows.rows) {
      if (kind === 'due') this.checkDue(d);
      else if (kind === 'open-task') {
        throw new InvariantViolation('no-task-after-stop', `${String(d.kind)} task ${String(d.task)} of enrollment ${String(d.id)} is open although the enrollment is ${String(d.state)}${d.suppressed ? ` and its address is suppressed (${String(d.suppressed)})` : ''}`);
      } else if (kind === 'suppressed') throw new InvariantViolation('opt-out', `enrollment ${String(d.id)} is ${String(d.state)} although its address is suppressed (${String(d.reason)})`);
      else if (kind === 'lost') {
        throw new InvariantViolation(
          'nothing-lost',
          `enrollment ${String(d.id)} is ${String(d.state)}, waiting for ${String(d.waiting_for ?? 'nothing')} (step ${String(d.step ?? '-')}, its request: ${String(d.request ?? 'none')}), and nothing will come`,
        );
      } else if (kind === 'timer') view.nextTimer = d.at ? Date.parse(String(d.at)) : null;
      else if (kind === 'plan') {
        view.planNeeded = d.needed === true;
        view.replanAt = d.replan ? Date.parse(String(d.replan)) : null;
      } else if (kind === 'claim') {
        const list = claims.get(String(d.mailbox)) ?? [];
        list.push(Date.parse(String(d.at)));
        claims.set(String(d.mailbox), list);
      } else view.queues.set(String(d.mailbox), Date.parse(String(d.at)));
    }
    for (const [mailboxId, p] of this.pacing) {
      this.checks++;
      const v = pacingViolation(p, claims.get(mailboxId) ?? []);
      if (v) throw new InvariantViolation('pacing', `mailbox ${mailboxId}: ${v}`);
    }
    return view;
  }

  private checkDue(d: Record<string, unknown>): void {
    const at = Date.parse(String(d.at));
    const settings = (d.settings ?? {}) as SequenceSettings;
    const spec: CalendarSpec = {
      zone: String(d.zone),
      window: parseWindow(d.window as Parameters<typeof parseWindow>[0]),
      skipHolidays: settings.skipHolidays ?? true,
      jitterMinutes: 0,
      ...(d.country ? { country: String(d.country) } : {}),
      ...(d.region ? { region: String(d.region) } : {}),
    };
    if (!isAllowed(at, spec)) {
      throw new InvariantViolation(
        'human-time',
        `enrollment ${String(d.id)} (${String(d.state)}) is due at ${iso(at)}, outside its calendar (zone ${spec.zone}, country ${spec.country ?? '-'}${spec.region ? `-${spec.region}` : ''}, window ${JSON.stringify(d.window)}, holidays ${spec.skipHolidays ? 'skipped' : 'not skipped'})`,
      );
    }
    // A timing arm's send hours (sequence/arm-view.ts): the step the enrollment waits for is due inside them.
    const hours = d.state === 'active' ? armHoursOf(settings, (d.arms ?? {}) as Record<string, string>, d.step === null ? undefined : String(d.step)) : undefined;
    const armWin = hours ? armWindow(hours, spec.window) : undefined;
    if (armWin && !isAllowed(at, { ...spec, window: armWin })) {
      throw new InvariantViolation('arm-hours', `enrollment ${String(d.id)} is due at ${iso(at)} for step ${String(d.step)}, outside its experiment arm's send hours ${hours} (zone ${spec.zone})`);
    }
  }

  /** After the run has drained: the records agree with the Sent folders and nothing is left pending. */
  /**
   * 12: a call task's tries counted from the journal (each call outcome the engine was given is one,
   * applied or not), never more than its step's retry rule allows, and the task's own counter, which
   * the rule reads, agreeing with them.
   */
  private async checkCallTries(): Promise<void> {
    this.checks++;
    const bad = await sql<{ task: string; attempts: number; tries: number; allowed: number }>`
      select t.id as task, t.attempts, x.tries, 1 + coalesce((st.config->'retry'->>'attempts')::int, 0) as allowed
      from task t join step st on st.id = t.step_id
      cross join lateral (select count(*)::int as tries from event ev
                          where ev.enrollment_id = t.enrollment_id and ev.type in ('call_outcome', 'call_outcome.ignored')
                            and ev.payload->'event'->>'stepId' = t.step_id::text) x
      where t.kind = 'call' and (x.tries <> t.attempts or x.tries > 1 + coalesce((st.config->'retry'->>'attempts')::int, 0))
      limit 1`.execute(this.store.db);
    const b = bad.rows[0];
    if (b) throw new InvariantViolation('call-tries', `call task ${b.task} was called ${b.tries} times (its counter says ${b.attempts}); its retry rule allows ${b.allowed}`);
  }

  /** 13: the steps an enrollment got work for (send requests, tasks) belong to one arm per branch at most. */
  private async checkOneArm(): Promise<void> {
    this.checks++;
    const bad = await sql<{ e: string; branch: string; arms: string }>`
      select w.e, w.branch, string_agg(distinct w.arm, ',') as arms
      from (select r.enrollment_id as e, s.config->'arm'->>'branch' as branch, s.config->'arm'->>'key' as arm
            from send_request r join step s on s.id = r.step_id where s.config->'arm' is not null
            union all
            select t.enrollment_id, s.config->'arm'->>'branch', s.config->'arm'->>'key'
            from task t join step s on s.id = t.step_id where s.config->'arm' is not null) w
      group by w.e, w.branch
      having count(distinct w.arm) > 1
      limit 1`.execute(this.store.db);
    const b = bad.rows[0];
    if (b) throw new InvariantViolation('one-arm', `enrollment ${b.e} ran steps of arms ${b.arms} of branch ${b.branch}`);
  }

  /**
   * 14: every reply the engine applied with an intent its sequence has a rule for. A notify rule's
   * notice reopens the answered step's task if the stop cancelled it, and never a completed one, so
   * no notice is right only when that enrollment has a completed task of its own. The first step of
   * the enrollment a move made is due no earlier than the rule's delay after the reply, less an hour
   * (a daylight-saving change inside a delay counted in days keeps the wall-clock time). That the
   * old enrollment never sends again is never-after-stop's: the reply stopped it.
   */
  async checkReplyRules(): Promise<{ notices: number; moves: number; refused: number }> {
    this.checks++;
    const rows = await sql<{ e: string; at: Date; to_state: string; intent: string; rule: unknown; moved_to: string | null; state_reason: string | null; notices: number; closed: number; successors: Array<{ id: string; seq: string; due: string | null }> | null }>`
      select ev.enrollment_id as e, ev.at, ev.payload->>'to' as to_state, ev.payload->'event'->>'intent' as intent,
             s.stop_rules->'onReply'->(ev.payload->'event'->>'intent') as rule, o.moved_to, o.state_reason,
             (select count(*)::int from task t where t.enrollment_id = o.id and ${NOTICE}) as notices,
             (select count(*)::int from task t where t.enrollment_id = o.id and t.state in ('done', 'skipped') and not ${NOTICE}) as closed,
             (select json_agg(json_build_object('id', n.id, 'seq', ns.key, 'due', nv.payload->>'dueAt'))
              from event nv join enrollment n on n.id = nv.enrollment_id join sequence ns on ns.id = n.sequence_id
              where nv.type = 'enrolled' and nv.payload->>'movedFrom' = o.id::text) as successors
      from event ev join enrollment o on o.id = ev.enrollment_id join sequence s on s.id = o.sequence_id
      where ev.type = 'reply' and ev.payload->'event'->>'intent' is not null
        and s.stop_rules->'onReply'->(ev.payload->'event'->>'intent') is not null
      order by ev.id`.execute(this.store.db);
    const out = { notices: 0, moves: 0, refused: 0 };
    const unitMs: Record<string, number> = { minutes: 60_000, hours: 3_600_000, days: 86_400_000, business_days: 86_400_000 };
    for (const r of rows.rows) {
      const what = `enrollment ${r.e}: ${r.intent} reply at ${iso(r.at.getTime())}`;
      const fail = (detail: string) => new InvariantViolation('reply-rules', `${what} (rule ${JSON.stringify(r.rule)}): ${detail}`);
      if (r.to_state !== 'replied') throw fail(`the reply left it ${r.to_state}, not stopped`);
      const successors = r.successors ?? [];
      if (r.rule === 'notify') {
        if (r.notices > 1 || (r.notices === 0 && r.closed === 0)) throw fail(`${r.notices} notice tasks, not one`);
        if (successors.length) throw fail(`a notify rule moved it to ${successors.map((x) => x.id).join(', ')}`);
        out.notices += r.notices;
        continue;
      }
      const rule = r.rule as { moveTo: string; after: { amount: number; unit: string } };
      if (successors.length === 0) {
        if (!r.state_reason?.includes('(not enrolled:')) throw fail(`no enrollment in ${rule.moveTo}, and no refusal on it (${r.state_reason ?? 'no reason'})`);
        out.refused++;
        continue;
      }
      if (successors.length > 1) throw fail(`moved ${successors.length} times (${successors.map((x) => x.id).join(', ')})`);
      const n = successors[0]!;
      if (n.seq !== rule.moveTo) throw fail(`moved to ${n.seq}`);
      if (r.moved_to !== n.id) throw fail(`moved_to is ${r.moved_to ?? 'null'}, not ${n.id}`);
      const earliest = r.at.getTime() + rule.after.amount * (unitMs[rule.after.unit] ?? 0) - 3_600_000;
      if (n.due !== null && new Date(n.due).getTime() < earliest) throw fail(`its first step in ${rule.moveTo} was due at ${n.due}, before the rule's delay`);
      out.moves++;
    }
    return out;
  }

  async finalCheck(): Promise<{ notices: number; moves: number; refused: number }> {
    await this.checkDeliveries();
    await this.checkStore(-Infinity);
    await this.checkCallTries();
    await this.checkOneArm();
    const replyRules = await this.checkReplyRules();
    this.checks += 2;
    const reqs = await this.store.db.selectFrom('send_request').select(['id', 'state', 'message_id']).execute();
    const byId = new Map(reqs.map((r) => [r.id, r]));
    const outbound = await this.store.db.selectFrom('message').select(['message_id', 'send_request_id']).where('direction', '=', 'outbound').execute();
    const rows = new Map<string, number>();
    for (const m of outbound) rows.set(m.message_id, (rows.get(m.message_id) ?? 0) + 1);
    const delivered = new Set<string>();
    for (const d of this.server.deliveries) {
      delivered.add(d.requestId);
      const r = byId.get(d.requestId);
      if (!r || (r.state !== 'sent' && r.state !== 'possibly_sent') || r.message_id !== d.messageId) {
        throw new InvariantViolation('records-match', `delivered ${d.messageId} (request ${d.requestId}) is recorded as ${r ? `${r.state} ${r.message_id ?? ''}` : 'missing'}`);
      }
      if (rows.get(d.messageId) !== 1) throw new InvariantViolation('records-match', `delivered ${d.messageId} has ${rows.get(d.messageId) ?? 0} outbound message rows`);
    }
    for (const r of reqs) {
      if (r.state === 'sent' && !delivered.has(r.id)) throw new InvariantViolation('records-match', `request ${r.id} is recorded as sent (${r.message_id}) but never reached the server`);
      if (r.state === 'in_flight' || r.state === 'unknown') throw new InvariantViolation('settled', `request ${r.id} is still ${r.state} after the drain`);
    }
    return replyRules;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

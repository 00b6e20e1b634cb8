import type { PhoneCallOutcome, PhoneCallState } from '../store/schema.ts';

/**
 * A call's life as the softphone reports it, as pure rules: which report moves the record where,
 * what the end suggests as the outcome, and when a call counts as dropped. No clock, no I/O:
 * src/dialer/calls.ts applies the result to the phone_call row.
 */

/**
 * Why a call ended, in the softphone's words reduced to what matters to the record (the SIP library's
 * own causes are mapped in the web app, web/src/dialer/): a normal hang-up by either side; the far
 * end busy, not answering, declining or unreachable; the rep cancelling before an answer; media or
 * signalling lost (the relay died, the network went); anything else.
 */
export const endCauses = ['hangup', 'busy', 'no_answer', 'rejected', 'unavailable', 'canceled', 'media_lost', 'connection_lost', 'failed'] as const;
export type EndCause = (typeof endCauses)[number];

export type ProgressEvent =
  | { event: 'ringing'; at: number }
  | { event: 'answered'; at: number }
  /** The softphone is still on the call: nothing changes but the last word. */
  | { event: 'alive'; at: number }
  | { event: 'ended'; at: number; cause: EndCause };

export interface CallTimes {
  state: PhoneCallState;
  outcome: PhoneCallOutcome | null;
  createdAt: number;
  ringingAt: number | null;
  answeredAt: number | null;
  endedAt: number | null;
}

export interface ProgressChange {
  state: PhoneCallState;
  ringingAt: number | null;
  answeredAt: number | null;
  endedAt: number | null;
  durationMs: number | null;
  endCause: EndCause | null;
  suggested: 'connected' | 'no_answer' | 'busy' | 'dropped' | null;
  /** Set only for a call that ended abnormally: the record says 'dropped' at once, never nothing. */
  outcome: 'dropped' | null;
}

const order: Record<PhoneCallState, number> = { dialing: 0, ringing: 1, answered: 2, ended: 3 };

/**
 * The change a progress report makes, or a reason it makes none. Reports may arrive twice or out of
 * order (a retried request, two tabs): one that would move the call backwards, or past its end, is
 * ignored with a reason rather than refused, so the softphone never has to care. A report's time
 * is clamped to be no earlier than the call's creation and its previous step.
 */
export function applyProgress(call: CallTimes, ev: ProgressEvent): { change: ProgressChange } | { ignored: string } {
  if (call.state === 'ended') return { ignored: 'the call has ended' };
  const floor = Math.max(call.createdAt, call.ringingAt ?? 0, call.answeredAt ?? 0);
  const at = Math.max(ev.at, floor);
  const base: ProgressChange = { state: call.state, ringingAt: call.ringingAt, answeredAt: call.answeredAt, endedAt: null, durationMs: null, endCause: null, suggested: null, outcome: null };
  switch (ev.event) {
    case 'alive':
      return { change: base };
    case 'ringing':
      if (order[call.state] >= order.ringing) return { ignored: `already ${call.state}` };
      return { change: { ...base, state: 'ringing', ringingAt: at } };
    case 'answered':
      if (call.state === 'answered') return { ignored: 'already answered' };
      return { change: { ...base, state: 'answered', answeredAt: at } };
    case 'ended': {
      const answered = call.answeredAt !== null;
      const suggested = suggestOutcome(answered, ev.cause);
      return {
        change: {
          ...base,
          state: 'ended',
          endedAt: at,
          durationMs: answered ? at - call.answeredAt! : null,
          endCause: ev.cause,
          suggested,
          outcome: suggested === 'dropped' ? 'dropped' : null,
        },
      };
    }
  }
}

/**
 * What an end suggests the outcome was. Answered and hung up normally: connected (the rep says
 * whether it was a person or voicemail, a meeting or a wrong number). Answered and lost: dropped.
 * Not answered: busy, no answer (unanswered, declined, unreachable, or cancelled after ringing), or
 * dropped when the call never got through for a fault of ours.
 */
export function suggestOutcome(answered: boolean, cause: EndCause): ProgressChange['suggested'] {
  if (answered) return cause === 'media_lost' || cause === 'connection_lost' || cause === 'failed' ? 'dropped' : 'connected';
  switch (cause) {
    case 'busy':
      return 'busy';
    case 'no_answer':
    case 'rejected':
    case 'unavailable':
    case 'canceled':
    case 'hangup':
      return 'no_answer';
    case 'media_lost':
    case 'connection_lost':
    case 'failed':
      return 'dropped';
  }
}

export interface SweepPolicy {
  /** A live call the softphone has not spoken of for this long is dropped (it heartbeats every 20 s). */
  silentMs: number;
  /** An ended call with no outcome this long after its end is given its suggested outcome. */
  unloggedMs: number;
}

export const defaultSweepPolicy: SweepPolicy = { silentMs: 90_000, unloggedMs: 30 * 60_000 };

/** The end a silent live call gets: the browser or its network died mid-call; its record says so. */
export function silentEnd(call: CallTimes, seenAt: number): ProgressChange {
  const r = applyProgress(call, { event: 'ended', at: seenAt, cause: 'connection_lost' });
  if ('ignored' in r) throw new Error('silentEnd: the call has already ended');
  return r.change;
}

import { useRef, useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import type { ApiBody } from '../types.ts';
import { CallRecord } from './call-record.ts';
import type { InboundMatch, InboundPhase } from './IncomingCallCard.tsx';
import type { IncomingCall } from './softphone.ts';

export type Outcome = ApiBody<'POST /api/workspaces/:workspaceId/calls/:callId/outcome'>['outcome'];

/** The outcomes a rep gives on hang-up, in key order (1–7). */
export const CALL_OUTCOMES: [Outcome, string][] = [
  ['connected', 'Connected'],
  ['voicemail', 'Voicemail'],
  ['no_answer', 'No answer'],
  ['busy', 'Busy'],
  ['wrong_number', 'Wrong number (stops the sequence)'],
  ['meeting_booked', 'Meeting booked (ends the sequence)'],
  ['not_interested', 'Not interested (stops the sequence)'],
];

export interface InboundState {
  incoming: IncomingCall;
  match?: InboundMatch;
  phase: InboundPhase;
}

/**
 * A call to the rep, wherever it rings (the power dialer, or the app's dock on any other screen;
 * docs/dialer.md "Incoming calls"): its record is opened when it rings (POST …/calls/inbound,
 * which also matches the caller to a lead), its progress is reported to the record once answered,
 * a decline or a caller who gives up leaves it missed, and the rep's outcome closes it.
 */
export function useInboundCall(workspaceId: string, onError: (message: string) => void) {
  const [inbound, setInbound] = useState<InboundState>();
  const record = useRef<Promise<CallRecord> | null>(null);
  const errors = useRef(onError);
  errors.current = onError;

  const onIncoming = (incoming: IncomingCall) => {
    const rec = call('POST /api/workspaces/:workspaceId/calls/inbound', ws(workspaceId, 'calls/inbound'), { from: incoming.from }).then((r) => {
      setInbound((cur) => (cur?.incoming === incoming ? { ...cur, match: r } : cur));
      return new CallRecord(workspaceId, r.call.id);
    });
    rec.catch((e: unknown) => errors.current(errorMessage(e)));
    record.current = rec;
    setInbound({ incoming, phase: 'ringing' });
    // Declined, or the caller gave up: the record ends unanswered, which the server calls missed.
    void incoming.gone.then((cause) => {
      void rec.then((r) => r.report({ event: 'ended', at: new Date().toISOString(), cause }));
      setInbound((cur) => (cur?.incoming === incoming ? { ...cur, phase: 'missed' } : cur));
    });
  };
  const answer = () => {
    const cur = inbound;
    const rec = record.current;
    if (!cur || !rec) return;
    cur.incoming.answer((e) => {
      void rec.then((r) => r.report(e));
      if (e.event === 'answered') setInbound((c) => (c?.incoming === cur.incoming ? { ...c, phase: 'answered' } : c));
      if (e.event === 'ended') setInbound((c) => (c?.incoming === cur.incoming ? { ...c, phase: 'ended' } : c));
    });
  };
  const dismiss = () => {
    record.current = null;
    setInbound(undefined);
  };
  /** Logs the outcome of the answered call and closes it. */
  const logOutcome = async (outcome: Outcome, notes?: string) => {
    const rec = record.current;
    if (!rec) return;
    const r = await rec;
    await call('POST /api/workspaces/:workspaceId/calls/:callId/outcome', ws(workspaceId, `calls/${r.id}/outcome`), { outcome, ...(notes ? { notes } : {}) });
    r.stop();
    dismiss();
  };
  /** Answered (in the call or ended, its outcome not given yet): the rep's next outcome is this call's. */
  const live = inbound !== undefined && (inbound.phase === 'answered' || inbound.phase === 'ended');
  return { inbound, onIncoming, answer, decline: () => inbound?.incoming.decline(), dismiss, logOutcome, live };
}

import { useMemo } from 'react';
import { api, ws } from '../api.ts';
import type { ApiResponse } from '../types.ts';
import { when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import type { useInboundCall } from './use-inbound-call.ts';

export type InboundMatch = ApiResponse<'POST /api/workspaces/:workspaceId/calls/inbound'>;
type LeadPage = ApiResponse<'GET /api/workspaces/:workspaceId/leads/:leadId'>;
export type InboundPhase = 'ringing' | 'answered' | 'ended' | 'missed';

/**
 * A call to the rep (docs/dialer.md "Incoming calls"): the caller's number and the lead the
 * server matched it to (POST …/calls/inbound, the best guess first), with their company, sequences
 * and last emails, and Answer / Decline while it rings. The outcome is logged like an outgoing
 * call's, in the power dialer beside it.
 */
export function IncomingCallCard({ workspaceId, from, match, phase, onAnswer, onDecline, onDismiss }: {
  workspaceId: string;
  from: string;
  match: InboundMatch | undefined;
  phase: InboundPhase;
  onAnswer: () => void;
  onDecline: () => void;
  onDismiss: () => void;
}) {
  const best = match?.leads[0];
  const lead = useLoad(() => (best ? api<LeadPage>('GET', ws(workspaceId, `leads/${best.id}`)) : Promise.resolve(undefined)), [workspaceId, best?.id]);
  const emails = useMemo(() => (lead.data?.timeline ?? []).filter((e) => e.kind === 'sent' || e.kind === 'received').slice(0, 3), [lead.data]);
  const number = match?.caller.e164 ?? from;
  const who = best ? (best.name ?? best.email) : 'Unknown caller';
  const heading = phase === 'ringing' ? 'Incoming call' : phase === 'answered' ? 'In call with' : phase === 'missed' ? 'Missed call' : 'Call ended';
  return (
    <section className="card stack" role="region" aria-label="Incoming call" data-phase={phase}>
      <div>
        <strong>{heading}</strong> · {number}
      </div>
      <div>
        <strong data-lead-name>{who}</strong>
        {best?.company && <span className="muted"> · {best.company}</span>}
        {match?.more && <span className="muted small"> (more leads share this number)</span>}
      </div>
      {(lead.data?.enrollments.length ?? 0) > 0 && (
        <div className="small">Sequences: {lead.data!.enrollments.map((e) => `${e.sequenceName} (${e.state})`).join(', ')}</div>
      )}
      {emails.length > 0 && (
        <ul className="small" aria-label="Last emails">
          {emails.map((e, i) => (
            <li key={i}>
              {e.kind === 'sent' ? 'Sent' : 'Received'} {when(e.at)}: {e.what}
            </li>
          ))}
        </ul>
      )}
      <div className="row">
        {phase === 'ringing' && (
          <>
            <button type="button" className="btn btn-primary" onClick={onAnswer} aria-label={`Answer the call from ${number}`}>
              Answer
            </button>
            <button type="button" className="btn btn-danger" onClick={onDecline} aria-label={`Decline the call from ${number}`}>
              Decline
            </button>
          </>
        )}
        {phase === 'missed' && (
          <button type="button" className="btn" onClick={onDismiss}>
            Dismiss
          </button>
        )}
      </div>
    </section>
  );
}

/** The card of the call useInboundCall follows, if one rings or was answered; `beforeAnswer` clears the notes of the screen. */
export function InboundCallCard({ workspaceId, call, beforeAnswer }: { workspaceId: string; call: ReturnType<typeof useInboundCall>; beforeAnswer: () => void }) {
  const { inbound } = call;
  if (!inbound) return null;
  return (
    <IncomingCallCard
      workspaceId={workspaceId}
      from={inbound.incoming.from}
      match={inbound.match}
      phase={inbound.phase}
      onAnswer={() => {
        beforeAnswer();
        call.answer();
      }}
      onDecline={call.decline}
      onDismiss={call.dismiss}
    />
  );
}

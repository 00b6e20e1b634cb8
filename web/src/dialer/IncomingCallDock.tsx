import { createContext, useContext, useEffect, useState, type ReactNode } from 'react';
import { CallPanel } from './CallPanel.tsx';
import { InboundCallCard } from './IncomingCallCard.tsx';
import { CALL_OUTCOMES, useInboundCall } from './use-inbound-call.ts';

/**
 * Incoming calls on every screen (docs/dialer.md "Incoming calls"). The app keeps one phone
 * registered for the signed-in rep: the power dialer's while it is open (it claims incoming calls
 * with useClaimIncoming), else this dock's, so a prospect calling back rings wherever the rep is.
 * A call answered here stays in the dock, with its notes and outcome, while the rep moves around
 * the app; the dock keeps its phone until that call is logged, even if the dialer opens meanwhile.
 */
const Claims = createContext<{ claimed: boolean; claim: (delta: number) => void }>({ claimed: false, claim: () => {} });

export function IncomingCallsProvider({ children }: { children: ReactNode }) {
  const [claims, setClaims] = useState(0);
  return <Claims.Provider value={{ claimed: claims > 0, claim: (d) => setClaims((n) => n + d) }}>{children}</Claims.Provider>;
}

/** While the calling component is mounted, incoming calls ring there and not in the dock. */
export function useClaimIncoming(): void {
  const { claim } = useContext(Claims);
  useEffect(() => {
    claim(1);
    return () => claim(-1);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
}

export function IncomingCallDock({ workspaceId }: { workspaceId: string }) {
  const { claimed } = useContext(Claims);
  const [error, setError] = useState<string>();
  const [notes, setNotes] = useState('');
  const [busy, setBusy] = useState(false);
  const inboundCall = useInboundCall(workspaceId, setError);
  const { inbound } = inboundCall;
  // The dialer rings instead; a call already here keeps this phone until it is logged.
  if (claimed && !inbound) return null;
  const log = async (outcome: (typeof CALL_OUTCOMES)[number][0]) => {
    setBusy(true);
    setError(undefined);
    try {
      await inboundCall.logOutcome(outcome, notes.trim() || undefined);
      setNotes('');
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <aside className="incoming-dock stack" aria-label="Phone" hidden={!inbound}>
      <InboundCallCard workspaceId={workspaceId} call={inboundCall} beforeAnswer={() => setNotes('')} />
      {/* The phone: registered while the dock is mounted; its Hang up and Mute serve the answered call (nothing is dialled from here). */}
      <CallPanel workspaceId={workspaceId} number="" receiveOnly onIncoming={inboundCall.onIncoming} />
      {error && (
        <p role="alert" className="small">
          {error}
        </p>
      )}
      {inboundCall.live && (
        <>
          <label className="stack">
            <span>Notes</span>
            <textarea rows={3} value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={10_000} />
          </label>
          <fieldset className="row" disabled={busy || inbound?.phase === 'answered'}>
            <legend>Outcome</legend>
            {CALL_OUTCOMES.map(([value, label]) => (
              <button key={value} type="button" className="btn" onClick={() => void log(value)}>
                {label}
              </button>
            ))}
          </fieldset>
        </>
      )}
    </aside>
  );
}

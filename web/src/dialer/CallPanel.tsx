import { useEffect, useRef, useState } from 'react';
import { call as apiCall, ws } from '../api.ts';
import { Badge } from '../ui/parts.tsx';
import { Softphone, type Call, type CallProgressEvent, type DialerConfig, type SoftphoneOptions } from './softphone.ts';

/**
 * Call / Hang up / Mute for one number, with the call's state and a timer (docs/dialer.md). The
 * panel fetches the rep's SIP credential (GET …/dialer/config) when it is first shown, registers,
 * and reports each call's progress to its parent, which records the call (ringing, answered, ended
 * with a cause; the SIP Call-ID ties the record to Kamailio's and the carrier's logs).
 */
export interface CallPanelProps {
  workspaceId: string;
  /** The prospect's number (E.164 preferred). */
  number: string;
  onProgress?: (event: CallProgressEvent) => void;
  /** Media only through TURN ('relay'), for networks that allow nothing else. */
  iceTransportPolicy?: SoftphoneOptions['iceTransportPolicy'];
  /** Where the credential comes from; default: the dialer/config route. Tests give their own. */
  loadConfig?: () => Promise<DialerConfig | { enabled: false; reason: string }>;
  /**
   * Runs after the click and before the phone rings (the call's record is opened there); when it
   * throws, nothing is dialled and its message is shown (no number to dial, the lead's night).
   */
  beforeDial?: () => Promise<void>;
}

type PanelState =
  | { kind: 'loading' }
  | { kind: 'off'; reason: string }
  | { kind: 'ready' }
  | { kind: 'calling' }
  | { kind: 'ringing' }
  | { kind: 'in_call'; since: number }
  | { kind: 'ended'; cause: string }
  | { kind: 'refused'; reason: string };

const CAUSE_TEXT: Record<string, string> = {
  local_hangup: 'Call ended',
  remote_hangup: 'They hung up',
  busy: 'Busy',
  no_answer: 'No answer',
  cancelled: 'Cancelled',
  rejected: 'Declined',
  unavailable: 'Unavailable',
  not_found: 'Number not found',
  media_lost: 'Call dropped (no audio)',
  connection_error: 'Phone service unreachable',
  auth_failed: 'Phone sign-in failed',
  no_microphone: 'No microphone access',
};

function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export function CallPanel({ workspaceId, number, onProgress, iceTransportPolicy, loadConfig, beforeDial }: CallPanelProps) {
  const [state, setState] = useState<PanelState>({ kind: 'loading' });
  const [muted, setMuted] = useState(false);
  const [tick, setTick] = useState(0);
  const phone = useRef<Softphone | null>(null);
  const current = useRef<Call | null>(null);
  const progress = useRef(onProgress);
  progress.current = onProgress;
  // The loader is read when the panel mounts: a new function each render must not register again.
  const loader = useRef(loadConfig);
  loader.current = loadConfig;

  // Bumped shortly before the credential expires: the effect below fetches a fresh one and registers again.
  const [generation, setGeneration] = useState(0);
  // The credential says whether the workspace records calls; the prospect hears the announcement,
  // the rep sees it here (rtpengine's player is not sent towards the browser, docs/dialer.md).
  const [recorded, setRecorded] = useState(false);

  useEffect(() => {
    let gone = false;
    let renew: ReturnType<typeof setTimeout> | undefined;
    const load = loader.current ?? (() => apiCall('GET /api/workspaces/:workspaceId/dialer/config', ws(workspaceId, 'dialer/config')));
    void (async () => {
      try {
        const cfg = await load();
        if (gone) return;
        if ('enabled' in cfg && cfg.enabled === false) return setState({ kind: 'off', reason: cfg.reason });
        setRecorded((cfg as { recorded?: boolean }).recorded === true);
        const p = new Softphone(cfg as DialerConfig, iceTransportPolicy ? { iceTransportPolicy } : {});
        phone.current = p;
        await p.register();
        if (gone) return;
        setState((s) => (s.kind === 'loading' ? { kind: 'ready' } : s));
        // A minute before the credential expires (never a live call's: wait for its end), fetch a new one.
        const due = Date.parse((cfg as DialerConfig).expiresAt) - Date.now() - 60_000;
        const later = (ms: number) => {
          renew = setTimeout(() => (current.current ? later(30_000) : setGeneration((g) => g + 1)), Math.max(30_000, ms));
        };
        if (Number.isFinite(due)) later(due);
      } catch (e) {
        if (!gone) setState({ kind: 'off', reason: e instanceof Error ? e.message : String(e) });
      }
    })();
    return () => {
      gone = true;
      if (renew !== undefined) clearTimeout(renew);
      current.current?.hangup();
      phone.current?.stop();
      phone.current = null;
    };
  }, [workspaceId, iceTransportPolicy, generation]);

  // The call timer: once a second while in a call.
  useEffect(() => {
    if (state.kind !== 'in_call') return;
    const t = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, [state.kind]);

  const start = async () => {
    const p = phone.current;
    if (!p) return;
    setMuted(false);
    setState({ kind: 'calling' });
    try {
      await beforeDial?.();
    } catch (e) {
      setState({ kind: 'refused', reason: e instanceof Error ? e.message : String(e) });
      return;
    }
    try {
      current.current = p.call(number, (e) => {
        if (e.event === 'ringing') setState((s) => (s.kind === 'calling' ? { kind: 'ringing' } : s));
        else if (e.event === 'answered') setState({ kind: 'in_call', since: Date.now() });
        else {
          current.current = null;
          setState({ kind: 'ended', cause: e.cause ?? 'failed' });
        }
        progress.current?.(e);
      });
    } catch (e) {
      setState({ kind: 'ended', cause: e instanceof Error ? e.message : 'failed' });
    }
  };
  const hangup = () => current.current?.hangup();
  const toggleMute = () => {
    const c = current.current;
    if (!c) return;
    c.setMuted(!muted);
    setMuted(!muted);
  };

  const inCall = state.kind === 'calling' || state.kind === 'ringing' || state.kind === 'in_call';
  let status: string;
  switch (state.kind) {
    case 'loading':
      status = 'Connecting the phone…';
      break;
    case 'off':
      status = `Phone unavailable: ${state.reason}`;
      break;
    case 'ready':
      status = 'Ready';
      break;
    case 'calling':
      status = 'Calling…';
      break;
    case 'ringing':
      status = 'Ringing…';
      break;
    case 'in_call':
      status = `In call ${clock(Date.now() - state.since)}`;
      break;
    case 'ended':
      status = CAUSE_TEXT[state.cause] ?? `Call failed (${state.cause})`;
      break;
    case 'refused':
      status = `Not dialled: ${state.reason}`;
      break;
  }
  void tick;

  return (
    <div className="call-panel row" role="group" aria-label={`Phone call to ${number}`} data-state={state.kind}>
      {inCall ? (
        <button type="button" className="btn btn-danger" onClick={hangup} aria-label={`Hang up the call to ${number}`}>
          Hang up
        </button>
      ) : (
        <button type="button" className="btn btn-primary" onClick={() => void start()} disabled={state.kind !== 'ready' && state.kind !== 'ended' && state.kind !== 'refused'} aria-label={`Call ${number}`}>
          Call
        </button>
      )}
      <button type="button" className="btn" onClick={toggleMute} disabled={state.kind !== 'in_call'} aria-pressed={muted} aria-label={muted ? 'Unmute the microphone' : 'Mute the microphone'}>
        {muted ? 'Unmute' : 'Mute'}
      </button>
      <span className="muted small" role="status" aria-live="polite">
        {status}
      </span>
      {recorded && <Badge tone="warn">Calls are recorded</Badge>}
    </div>
  );
}

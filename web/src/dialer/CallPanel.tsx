import { useEffect, useRef, useState } from 'react';
import { call as apiCall, ws } from '../api.ts';
import { Badge } from '../ui/parts.tsx';
import { Softphone, type Call, type CallProgressEvent, type DialerConfig, type IncomingCall, type SoftphoneOptions, type VoicemailDrop } from './softphone.ts';
import { dropStatus, mayDrop, type DropView } from './voicemail-drop.ts';

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
  /** The consent announcement's WAV, asked for only when the credential records; default: the dialer/announcement route (null when the server has none). */
  loadAnnouncement?: () => Promise<ArrayBuffer | null>;
  /**
   * Runs after the click and before the phone rings (the call's record is opened there); when it
   * throws, nothing is dialled and its message is shown (no number to dial, the lead's night).
   */
  beforeDial?: () => Promise<void>;
  /** The rep's recorded message (decoded from GET …/dialer/voicemail); absent: no Drop voicemail button. */
  voicemail?: { clip: ArrayBuffer; durationMs: number } | null;
  /**
   * The clip started playing into the call: the call is no longer this panel's (its later events
   * are not reported through onProgress), and the parent logs it as voicemail and moves on.
   */
  onDropped?: (drop: VoicemailDrop) => void;
  /**
   * A call to this rep rings. Answering through the given object makes it the panel's call (Hang
   * up, Mute, timer). Absent, or while the panel has a call in progress: declined as busy (486).
   */
  onIncoming?: (incoming: IncomingCall) => void;
  /** Only answers calls (the app's dock): no Call button, Hang up and Mute for the answered call. */
  receiveOnly?: boolean;
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

/** Calls handed to a voicemail drop: their later events are the drop's, not the panel's. */
const dropped = new WeakSet<object>();

function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** GET …/dialer/announcement as bytes; null when the server has none (404). */
async function fetchAnnouncement(workspaceId: string): Promise<ArrayBuffer | null> {
  const res = await fetch(ws(workspaceId, 'dialer/announcement'), { credentials: 'same-origin' });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`the consent announcement could not be loaded (HTTP ${res.status})`);
  return res.arrayBuffer();
}

export function CallPanel({ workspaceId, number, onProgress, iceTransportPolicy, loadConfig, loadAnnouncement, beforeDial, voicemail, onDropped, onIncoming, receiveOnly }: CallPanelProps) {
  const [state, setState] = useState<PanelState>({ kind: 'loading' });
  const [muted, setMuted] = useState(false);
  const [tick, setTick] = useState(0);
  const phone = useRef<Softphone | null>(null);
  const current = useRef<Call | null>(null);
  const progress = useRef(onProgress);
  progress.current = onProgress;
  const incomingRef = useRef(onIncoming);
  incomingRef.current = onIncoming;
  // Voicemails playing into calls the rep has left: shown beside the panel's own call, never as it.
  const [drops, setDrops] = useState<DropView[]>([]);
  const dropping = useRef(0);
  // Each playing drop's end: the phone is stopped only after them (the last call of the queue was dropped and the dialer closes).
  const playing = useRef(new Set<Promise<void>>());
  // The loader is read when the panel mounts: a new function each render must not register again.
  const loader = useRef(loadConfig);
  loader.current = loadConfig;
  const announcementLoader = useRef(loadAnnouncement);
  announcementLoader.current = loadAnnouncement;
  // The announcement playing to the rep at the start of a recorded call (shown beside the badge).
  const [announcing, setAnnouncing] = useState(false);
  const [announced, setAnnounced] = useState(false);

  // Bumped shortly before the credential expires: the effect below fetches a fresh one and registers again.
  const [generation, setGeneration] = useState(0);
  // The credential says whether the workspace records calls; the prospect hears the announcement
  // from rtpengine, the rep from this browser (softphone's `announcement`), and sees the badge.
  const [recorded, setRecorded] = useState(false);
  // The rep's number on the trunk, signed into the credential: what the prospect's phone shows.
  const [callerId, setCallerId] = useState<string | null>(null);

  useEffect(() => {
    let gone = false;
    let renew: ReturnType<typeof setTimeout> | undefined;
    const load = loader.current ?? (() => apiCall('GET /api/workspaces/:workspaceId/dialer/config', ws(workspaceId, 'dialer/config')));
    void (async () => {
      try {
        const cfg = await load();
        if (gone) return;
        if ('enabled' in cfg && cfg.enabled === false) return setState({ kind: 'off', reason: cfg.reason });
        const records = (cfg as { recorded?: boolean }).recorded === true;
        setRecorded(records);
        setCallerId((cfg as { phoneNumber?: string | null }).phoneNumber ?? null);
        // A recorded call with no announcement for the rep still goes on: the badge tells them.
        const announcement = records ? await (announcementLoader.current ?? (() => fetchAnnouncement(workspaceId)))().catch(() => null) : null;
        if (gone) return;
        const p = new Softphone(cfg as DialerConfig, {
          ...(iceTransportPolicy ? { iceTransportPolicy } : {}),
          ...(announcement ? { announcement } : {}),
          onIncoming: (incoming) => {
            const take = incomingRef.current;
            if (!take || current.current) return incoming.decline();
            take({
              ...incoming,
              gone: incoming.gone,
              decline: () => incoming.decline(),
              answer: (report = () => {}) => {
                setMuted(false);
                const c = incoming.answer(follow(() => c, report));
                current.current = c;
                return c;
              },
            });
          },
        });
        phone.current = p;
        await p.register();
        if (gone) return;
        setState((s) => (s.kind === 'loading' ? { kind: 'ready' } : s));
        // A minute before the credential expires (never a live call's: wait for its end), fetch a new one.
        const due = Date.parse((cfg as DialerConfig).expiresAt) - Date.now() - 60_000;
        const later = (ms: number) => {
          // Re-registering stops the phone: never under a live call or a voicemail still playing.
          renew = setTimeout(() => (current.current || dropping.current > 0 ? later(30_000) : setGeneration((g) => g + 1)), Math.max(30_000, ms));
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
      const p = phone.current;
      void Promise.all([...playing.current]).then(() => p?.stop());
      phone.current = null;
    };
  }, [workspaceId, iceTransportPolicy, generation]);

  // The next task's number: the last call's ending is no longer news (the phone stays registered).
  useEffect(() => setState((s) => (s.kind === 'ended' || s.kind === 'refused' ? { kind: 'ready' } : s)), [number]);

  // The call timer: once a second while in a call or a voicemail plays.
  useEffect(() => {
    if (state.kind !== 'in_call' && drops.length === 0) return;
    const t = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, [state.kind, drops.length]);

  /** A call's progress into the panel's state and to the parent, until the call is dropped to voicemail and so no longer the panel's. */
  function follow(call: () => Call | null, report: (e: CallProgressEvent) => void) {
    return (e: CallProgressEvent) => {
      const c = call();
      if (c && dropped.has(c)) return;
      if (e.event === 'ringing') setState((s) => (s.kind === 'calling' ? { kind: 'ringing' } : s));
      else if (e.event === 'answered') {
        setState({ kind: 'in_call', since: Date.now() });
        if (c) {
          setAnnouncing(true);
          void c.announced.then((played) => {
            setAnnouncing(false);
            if (played) setAnnounced(true);
          });
        }
      }
      else {
        current.current = null;
        setState({ kind: 'ended', cause: e.cause ?? 'failed' });
      }
      report(e);
    };
  }

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
      const c: Call = p.call(number, follow(() => c, (e) => progress.current?.(e)));
      current.current = c;
    } catch (e) {
      setState({ kind: 'ended', cause: e instanceof Error ? e.message : 'failed' });
    }
  };
  const hangup = () => current.current?.hangup();
  const drop = async () => {
    const c = current.current;
    if (!c || !voicemail || !mayDrop({ answered: state.kind === 'in_call', hasClip: true, dropping: false }).ok) return;
    // From here the call is the drop's: the panel is free for the next call at once.
    dropped.add(c);
    current.current = null;
    setState({ kind: 'ready' });
    dropping.current++;
    try {
      const d = await c.dropVoicemail(voicemail.clip);
      const view: DropView = { number: c.number, startedAt: d.startedAt, clipMs: d.durationMs };
      setDrops((ds) => [...ds, view]);
      onDropped?.(d);
      playing.current.add(d.finished);
      void d.finished.then(() => {
        playing.current.delete(d.finished);
        dropping.current--;
        setDrops((ds) => ds.filter((x) => x !== view));
      });
    } catch (e) {
      dropping.current--;
      c.hangup();
      setState({ kind: 'refused', reason: `the voicemail could not play: ${e instanceof Error ? e.message : String(e)}` });
    }
  };
  const toggleMute = () => {
    const c = current.current;
    if (!c) return;
    c.setMuted(!muted);
    setMuted(!muted);
  };

  const dropCheck = mayDrop({ answered: state.kind === 'in_call', hasClip: Boolean(voicemail), dropping: false });
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
    <div className="call-panel row" role="group" aria-label={receiveOnly ? 'Phone' : `Phone call to ${number}`} data-state={state.kind}>
      {inCall ? (
        <button type="button" className="btn btn-danger" onClick={hangup} aria-label={`Hang up the call to ${current.current?.number ?? number}`}>
          Hang up
        </button>
      ) : receiveOnly ? null : (
        <button type="button" className="btn btn-primary" onClick={() => void start()} disabled={!number || (state.kind !== 'ready' && state.kind !== 'ended' && state.kind !== 'refused')} aria-label={`Call ${number}`}>
          Call
        </button>
      )}
      {(!receiveOnly || state.kind === 'in_call') && (
        <button type="button" className="btn" onClick={toggleMute} disabled={state.kind !== 'in_call'} aria-pressed={muted} aria-label={muted ? 'Unmute the microphone' : 'Mute the microphone'}>
        {muted ? 'Unmute' : 'Mute'}
      </button>
      )}
      {voicemail !== undefined && (
        <button type="button" className="btn" onClick={() => void drop()} disabled={!dropCheck.ok} title={dropCheck.ok ? undefined : dropCheck.text} aria-keyshortcuts="v" data-drop="voicemail">
          Drop voicemail
        </button>
      )}
      <span className="muted small" role="status" aria-live="polite">
        {status}
      </span>
      {callerId && <span className="muted small">Caller ID {callerId}</span>}
      {recorded && (
        <span data-announcement={announcing ? 'playing' : announced ? 'played' : 'none'}>
          <Badge tone="warn">{announcing ? 'Announcing the recording…' : 'Calls are recorded'}</Badge>
        </span>
      )}
      {drops.map((d) => (
        <span key={d.startedAt} className="muted small" data-dropping={d.number}>
          {dropStatus(d, Date.now())}
        </span>
      ))}
    </div>
  );
}

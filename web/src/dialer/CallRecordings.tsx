import { useEffect, useRef, useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import { when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

type Calls = Awaited<ReturnType<typeof loadCalls>>;
type RecordedCall = Calls['calls'][number];

const loadCalls = (workspaceId: string, leadId: string) => call('GET /api/workspaces/:workspaceId/calls', ws(workspaceId, `calls?leadId=${encodeURIComponent(leadId)}`));

/**
 * A lead's recorded calls, each with a player and its transcript. The audio element asks the API
 * itself (the session cookie goes with it, same origin), so the WAV is opened from its sealed copy
 * only when played, and each play is in the audit log; the transcript likewise is fetched only when
 * opened. While a transcript is on its way the list looks again every 5 s. Nothing shows for a
 * lead with no recording.
 */
export function CallRecordings({ workspaceId, leadId }: { workspaceId: string; leadId: string }) {
  const calls = useLoad(() => loadCalls(workspaceId, leadId), [workspaceId, leadId]);
  const recorded = (calls.data?.calls ?? []).filter((c) => c.recording);
  const waiting = recorded.some((c) => c.transcript?.state === 'pending' || c.transcript?.state === 'running');
  useEffect(() => {
    if (!waiting) return;
    const t = setTimeout(calls.reload, 5000);
    return () => clearTimeout(t);
  }, [waiting, calls.data, calls.reload]);
  if (recorded.length === 0) return null;
  return (
    <section className="card stack" aria-label="Call recordings">
      <h2>Call recordings</h2>
      <ul className="stack recordings">
        {recorded.map((c) => (
          <RecordedCallItem key={c.id} workspaceId={workspaceId} c={c} onChange={calls.reload} />
        ))}
      </ul>
    </section>
  );
}

function RecordedCallItem({ workspaceId, c, onChange }: { workspaceId: string; c: RecordedCall; onChange: () => void }) {
  const audio = useRef<HTMLAudioElement>(null);
  const seek = (ms: number) => {
    const a = audio.current;
    if (!a) return;
    // A player not loaded yet (preload="none") has no timeline to move on: move once it has one.
    if (a.readyState >= HTMLMediaElement.HAVE_METADATA) a.currentTime = ms / 1000;
    else a.addEventListener('loadedmetadata', () => void (a.currentTime = ms / 1000), { once: true });
    void a.play().catch(() => undefined);
  };
  return (
    // The anchor a CRM's call activity links to (src/crm/call-media.ts).
    <li className="stack" id={`call-${c.id}`}>
      <span className="small">
        {when(c.startedAt)} · {c.number ?? 'unknown number'} · {Math.round(c.recording!.durationMs / 1000)} s{c.outcome ? ` · ${c.outcome.replace(/_/g, ' ')}` : ''}
      </span>
      <audio ref={audio} controls preload="none" src={ws(workspaceId, `calls/${c.id}/recording`)} aria-label={`Recording of the call of ${when(c.startedAt)}`} />
      <TranscriptPart workspaceId={workspaceId} c={c} onSeek={seek} onChange={onChange} />
    </li>
  );
}

function TranscriptPart({ workspaceId, c, onSeek, onChange }: { workspaceId: string; c: RecordedCall; onSeek: (ms: number) => void; onChange: () => void }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string>();
  const t = c.transcript;
  if (!t) return null;
  const again = async () => {
    setAsking(true);
    setError(undefined);
    try {
      await call('POST /api/workspaces/:workspaceId/calls/:callId/transcript', ws(workspaceId, `calls/${c.id}/transcript`));
      onChange();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setAsking(false);
    }
  };
  if (t.state === 'pending' || t.state === 'running')
    return (
      <p className="small muted" role="status">
        Transcribing…{t.error ? ` (the last attempt failed: ${t.error}; trying again)` : ''}
      </p>
    );
  if (t.state === 'failed')
    return (
      <div className="stack">
        <p className="small" role="alert">
          The transcription failed: {t.error ?? 'no reason given'}
        </p>
        <div>
          <button type="button" onClick={() => void again()} disabled={asking}>
            {asking ? 'Asking…' : 'Transcribe again'}
          </button>
        </div>
        {error ? <p className="small" role="alert">{error}</p> : null}
      </div>
    );
  return <TranscriptText workspaceId={workspaceId} callId={c.id} onSeek={onSeek} />;
}

const clock = (ms: number) => {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

/** The speaker turns, fetched when the rep opens them; each turn's time plays the recording from there. */
function TranscriptText({ workspaceId, callId, onSeek }: { workspaceId: string; callId: string; onSeek: (ms: number) => void }) {
  const [open, setOpen] = useState(false);
  const t = useLoad(() => (open ? call('GET /api/workspaces/:workspaceId/calls/:callId/transcript', ws(workspaceId, `calls/${callId}/transcript`)) : Promise.resolve(undefined)), [workspaceId, callId, open]);
  const result = t.data?.transcript.result;
  return (
    <details onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>Transcript</summary>
      {t.error ? <p role="alert">{t.error}</p> : null}
      {open && t.loading && !result ? <p className="small muted">Loading…</p> : null}
      {result && result.turns.length === 0 ? <p className="small muted">No words were recognised in this call.</p> : null}
      {result ? (
        <ol className="transcript" aria-label="Transcript">
          {result.turns.map((turn, i) => (
            <li key={i} className={`turn turn-${turn.speaker}`}>
              <button type="button" className="link small" onClick={() => onSeek(turn.startMs)} aria-label={`Play from ${clock(turn.startMs)}`}>
                {clock(turn.startMs)}
              </button>{' '}
              <strong>{turn.speaker === 'rep' ? 'Rep' : 'Prospect'}:</strong> {turn.text}
            </li>
          ))}
        </ol>
      ) : null}
      {result ? <p className="small muted">{t.data?.transcript.model}</p> : null}
    </details>
  );
}

import { useEffect, useRef, useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import type { ApiResponse } from '../types.ts';
import { MAX_DROP_MS, clipBytes } from './voicemail-drop.ts';

type Saved = NonNullable<ApiResponse<'GET /api/workspaces/:workspaceId/dialer/voicemail'>['voicemail']>;

/** Base64 of bytes for the upload's JSON body, in chunks (a spread of 500 KB overflows the call stack). */
function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** A clip's length as the browser decodes it: the server checks it against its cap (and reads WAV headers itself). */
async function durationOf(bytes: ArrayBuffer): Promise<number> {
  const ctx = new AudioContext();
  try {
    return Math.round((await ctx.decodeAudioData(bytes.slice(0))).duration * 1000);
  } finally {
    void ctx.close();
  }
}

/**
 * The rep's voicemail message, recorded once (docs/dialer.md "Voicemail drop"): Record from the
 * microphone (MediaRecorder, WebM/Opus) or choose a file, listen back, Save. Recording stops by
 * itself at the server's 60 s cap. `onSaved` hands the saved clip to the dialer.
 */
export function VoicemailRecorder({ workspaceId, saved, onSaved }: { workspaceId: string; saved: Saved | null | undefined; onSaved: () => void }) {
  const [draft, setDraft] = useState<{ blob: Blob; url: string }>();
  const [recording, setRecording] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const recorder = useRef<MediaRecorder | null>(null);
  useEffect(() => () => draft && URL.revokeObjectURL(draft.url), [draft]);
  // An object URL, not a data: one: the web app's CSP lets media play from blob: only (security-headers.ts).
  const [savedUrl, setSavedUrl] = useState<string>();
  useEffect(() => {
    if (!saved) return setSavedUrl(undefined);
    const url = URL.createObjectURL(new Blob([clipBytes(saved.audio)], { type: saved.mimeType }));
    setSavedUrl(url);
    return () => URL.revokeObjectURL(url);
  }, [saved]);

  const take = (blob: Blob) => setDraft({ blob, url: URL.createObjectURL(blob) });

  const record = async () => {
    setError(undefined);
    try {
      const mic = await navigator.mediaDevices.getUserMedia({ audio: true });
      const r = new MediaRecorder(mic, MediaRecorder.isTypeSupported('audio/webm;codecs=opus') ? { mimeType: 'audio/webm;codecs=opus' } : {});
      const chunks: Blob[] = [];
      r.ondataavailable = (e) => chunks.push(e.data);
      r.onstop = () => {
        mic.getTracks().forEach((t) => t.stop());
        setRecording(false);
        take(new Blob(chunks, { type: r.mimeType }));
      };
      recorder.current = r;
      r.start();
      setRecording(true);
      setTimeout(() => r.state === 'recording' && r.stop(), MAX_DROP_MS);
    } catch (e) {
      setError(`the microphone is not available: ${errorMessage(e)}`);
    }
  };

  const save = async () => {
    if (!draft) return;
    setBusy(true);
    setError(undefined);
    try {
      const bytes = await draft.blob.arrayBuffer();
      const durationMs = await durationOf(bytes).catch(() => 0);
      await call('PUT /api/workspaces/:workspaceId/dialer/voicemail', ws(workspaceId, 'dialer/voicemail'), { mimeType: draft.blob.type || 'application/octet-stream', durationMs, audio: toBase64(new Uint8Array(bytes)) });
      setDraft(undefined);
      onSaved();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <details className="card stack" aria-label="Your voicemail message">
      <summary>
        Voicemail message {saved ? `(${Math.round(saved.durationMs / 1000)} s, saved)` : '(none yet: record one to drop it on voicemail greetings)'}
      </summary>
      <div className="row">
        {recording ? (
          <button type="button" className="btn btn-danger" onClick={() => recorder.current?.stop()}>
            Stop recording
          </button>
        ) : (
          <button type="button" className="btn" onClick={() => void record()}>
            Record
          </button>
        )}
        <label className="btn">
          Choose a file
          <input type="file" accept="audio/webm,audio/ogg,audio/wav,audio/mpeg" hidden onChange={(e) => e.target.files?.[0] && take(e.target.files[0])} />
        </label>
      </div>
      {draft && (
        <div className="row">
          <audio controls src={draft.url} aria-label="Listen to the new message" />
          <button type="button" className="btn btn-primary" onClick={() => void save()} disabled={busy}>
            Save
          </button>
        </div>
      )}
      {savedUrl && !draft && <audio controls src={savedUrl} aria-label="Listen to the saved message" />}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </details>
  );
}

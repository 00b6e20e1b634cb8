import { useMemo, useRef, useState } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import { CallRecord, type CallView } from '../dialer/call-record.ts';
import { CallPanel } from '../dialer/CallPanel.tsx';
import { useClaimIncoming } from '../dialer/IncomingCallDock.tsx';
import { InboundCallCard } from '../dialer/IncomingCallCard.tsx';
import { CALL_OUTCOMES, useInboundCall, type Outcome } from '../dialer/use-inbound-call.ts';
import { clipBytes, dropNote } from '../dialer/voicemail-drop.ts';
import { VoicemailRecorder } from '../dialer/VoicemailRecorder.tsx';
import type { ApiResponse, Task } from '../types.ts';
import { Badge, ErrorNote, when } from '../ui/parts.tsx';
import { useScreenShortcuts, useShortcuts } from '../ui/shortcuts.tsx';
import { useLoad } from '../ui/use-load.ts';

type LeadPage = ApiResponse<'GET /api/workspaces/:workspaceId/leads/:leadId'>;

const shortcuts = {
  title: 'Power dialer',
  shortcuts: [
    { key: 'c', what: 'Call the lead' },
    { key: '1 … 7', what: 'Log the outcome (Connected, Voicemail, No answer, Busy, Wrong number, Meeting booked, Not interested) and go to the next call' },
    { key: 'n', what: 'Next call, leaving this one open' },
    { key: 'v', what: 'Drop your recorded voicemail into the call, log it as Voicemail and go to the next call while it plays' },
  ],
};

/**
 * The power dialer: the call tasks due now, one at a time, with the lead's context beside the
 * phone. Call opens the call's record and dials (CallPanel); the softphone's progress goes to the
 * record; the outcome (a click or a key) closes it and moves to the next call. Without a working
 * phone (no dialer configured, or dialled elsewhere) the outcome is logged on the task.
 */
export function PowerDialer({ workspaceId, tasks, onLogged }: { workspaceId: string; tasks: Task[]; onLogged: () => void }) {
  const [index, setIndex] = useState(0);
  const [notes, setNotes] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [callView, setCallView] = useState<CallView>();
  const record = useRef<CallRecord | null>(null);
  const panel = useRef<HTMLDivElement>(null);
  const task = tasks.length ? tasks[index % tasks.length] : undefined;
  useScreenShortcuts(shortcuts);
  const saved = useLoad(() => call('GET /api/workspaces/:workspaceId/dialer/voicemail', ws(workspaceId, 'dialer/voicemail')), [workspaceId]);
  const clip = saved.data?.voicemail;
  const voicemail = useMemo(() => (clip ? { clip: clipBytes(clip.audio), durationMs: clip.durationMs } : null), [clip]);
  // A call to the rep while the dialer is open rings here (elsewhere in the app, IncomingCallDock).
  const inboundCall = useInboundCall(workspaceId, setError);
  const { inbound } = inboundCall;
  useClaimIncoming();

  const lead = useLoad(() => (task ? api<LeadPage>('GET', ws(workspaceId, `leads/${task.leadId}`)) : Promise.resolve(undefined)), [workspaceId, task?.leadId]);
  const emails = useMemo(() => (lead.data?.timeline ?? []).filter((e) => e.kind === 'sent' || e.kind === 'received').slice(0, 3), [lead.data]);

  const reset = () => {
    record.current?.stop();
    record.current = null;
    setCallView(undefined);
    setNotes('');
    setError(undefined);
  };
  const next = () => {
    reset();
    setIndex((i) => i + 1);
  };

  const beforeDial = async () => {
    if (!task) throw new Error('no call is due');
    reset();
    try {
      const r = await call('POST /api/workspaces/:workspaceId/calls', ws(workspaceId, 'calls'), { taskId: task.id, allowOutsideHours: false });
      record.current = new CallRecord(workspaceId, r.call.id, setCallView);
      setCallView(r.call);
    } catch (e) {
      throw new Error(errorMessage(e));
    }
  };

  /** An answered incoming call is logged, not the task's. */
  const inboundLive = inboundCall.live;

  const log = async (outcome: Outcome, note?: string) => {
    if (!task || busy) return;
    setBusy(true);
    setError(undefined);
    const text = note ?? (notes.trim() ? notes : undefined);
    try {
      if (inboundLive) {
        await inboundCall.logOutcome(outcome, text);
        setNotes('');
        return;
      }
      if (record.current) {
        await call('POST /api/workspaces/:workspaceId/calls/:callId/outcome', ws(workspaceId, `calls/${record.current.id}/outcome`), { outcome, ...(text ? { notes: text } : {}) });
      } else {
        await call('POST /api/workspaces/:workspaceId/tasks/:taskId/complete', ws(workspaceId, `tasks/${task.id}/complete`), { outcome, ...(text ? { notes: text } : {}) });
      }
      reset();
      onLogged();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  useShortcuts((key) => {
    if (!task) return false;
    if (key === 'c') {
      panel.current?.querySelector<HTMLButtonElement>('button.btn-primary:not([disabled])')?.click();
      return true;
    }
    if (key === 'n') {
      next();
      return true;
    }
    if (key === 'v') {
      panel.current?.querySelector<HTMLButtonElement>('button[data-drop="voicemail"]:not([disabled])')?.click();
      return true;
    }
    const n = Number(key);
    if (Number.isInteger(n) && n >= 1 && n <= CALL_OUTCOMES.length) {
      void log(CALL_OUTCOMES[n - 1]![0]);
      return true;
    }
    return false;
  });

  if (!task) return null;
  const live = (callView && callView.state !== 'ended') || inbound?.phase === 'answered';
  const suggested = callView?.state === 'ended' ? callView.suggested : null;
  return (
    <section className="stack" aria-labelledby="dialer-title">
      <div className="row">
        <h2 id="dialer-title">Power dialer</h2>
        <span className="muted">
          call {(index % tasks.length) + 1} of {tasks.length} due now
        </span>
      </div>
      <ErrorNote error={error ?? lead.error} />
      <InboundCallCard workspaceId={workspaceId} call={inboundCall} beforeAnswer={() => setNotes('')} />
      <div className="grid-2 dialer">
        <div className="card stack" aria-label="The lead">
          <div>
            <strong>{task.leadName ?? task.leadEmail}</strong>
            {task.company && <span className="muted"> · {task.company}</span>}
          </div>
          <div className="small">
            {task.title} · {task.sequenceName}
            {task.attempts > 0 && <Badge tone="info">try {task.attempts + 1}</Badge>}
          </div>
          <div>{task.phoneE164 ?? <Badge tone="warn">no number to dial{task.phone ? ` (${task.phone})` : ''}</Badge>}</div>
          {task.notes && <p className="small">{task.notes}</p>}
          <h3 className="small">Last emails</h3>
          {emails.length === 0 ? (
            <p className="muted small">None yet.</p>
          ) : (
            <ul className="small">
              {emails.map((e, i) => (
                <li key={i}>
                  {e.kind === 'sent' ? 'Sent' : 'Received'} {when(e.at)}: {e.what}
                  {e.detail && <span className="muted"> ({e.detail})</span>}
                </li>
              ))}
            </ul>
          )}
        </div>
        <div className="card stack" ref={panel}>
          {/* One panel for every task: its phone outlives a task, so a dropped voicemail plays on while the next call is placed. */}
          <CallPanel
            workspaceId={workspaceId}
            number={task.phoneE164 ?? ''}
            beforeDial={beforeDial}
            onProgress={(e) => void record.current?.report(e)}
            voicemail={voicemail}
            onDropped={(d) => void log('voicemail', dropNote(d.durationMs, notes))}
            onIncoming={inboundCall.onIncoming}
          />
          <VoicemailRecorder workspaceId={workspaceId} saved={clip} onSaved={saved.reload} />
          <label className="stack">
            <span>Notes</span>
            <textarea rows={4} value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={10_000} />
          </label>
          <fieldset className="row" disabled={busy || Boolean(live)}>
            <legend>Outcome{suggested ? `: the call suggests ${suggested.replace('_', ' ')}` : ''}</legend>
            {CALL_OUTCOMES.map(([value, label], i) => (
              <button key={value} type="button" className={`btn${value === suggested ? ' btn-primary' : ''}`} onClick={() => void log(value)} aria-keyshortcuts={String(i + 1)}>
                <kbd aria-hidden="true">{i + 1}</kbd> {label}
              </button>
            ))}
          </fieldset>
          <div className="row">
            <button type="button" className="btn" onClick={next} disabled={Boolean(live)} aria-keyshortcuts="n">
              <kbd aria-hidden="true">n</kbd> Next call
            </button>
          </div>
        </div>
      </div>
    </section>
  );
}

import { useMemo, useRef, useState } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import { CallRecord, type CallView } from '../dialer/call-record.ts';
import { CallPanel } from '../dialer/CallPanel.tsx';
import { IncomingCallCard, type InboundMatch, type InboundPhase } from '../dialer/IncomingCallCard.tsx';
import type { IncomingCall } from '../dialer/softphone.ts';
import { clipBytes, dropNote } from '../dialer/voicemail-drop.ts';
import { VoicemailRecorder } from '../dialer/VoicemailRecorder.tsx';
import type { ApiBody, ApiResponse, Task } from '../types.ts';
import { Badge, ErrorNote, when } from '../ui/parts.tsx';
import { useScreenShortcuts, useShortcuts } from '../ui/shortcuts.tsx';
import { useLoad } from '../ui/use-load.ts';

type Outcome = ApiBody<'POST /api/workspaces/:workspaceId/calls/:callId/outcome'>['outcome'];
type LeadPage = ApiResponse<'GET /api/workspaces/:workspaceId/leads/:leadId'>;

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
  // A call to the rep: its record (opened when it rings), the server's match, and where it stands.
  const [inbound, setInbound] = useState<{ incoming: IncomingCall; match?: InboundMatch; phase: InboundPhase }>();
  const inboundRecord = useRef<Promise<CallRecord> | null>(null);

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

  const onIncoming = (incoming: IncomingCall) => {
    const rec = call('POST /api/workspaces/:workspaceId/calls/inbound', ws(workspaceId, 'calls/inbound'), { from: incoming.from }).then((r) => {
      setInbound((cur) => (cur?.incoming === incoming ? { ...cur, match: r } : cur));
      return new CallRecord(workspaceId, r.call.id);
    });
    rec.catch((e: unknown) => setError(errorMessage(e)));
    inboundRecord.current = rec;
    setInbound({ incoming, phase: 'ringing' });
    // Declined, or the caller gave up: the record ends unanswered, which the server calls missed.
    void incoming.gone.then((cause) => {
      void rec.then((r) => r.report({ event: 'ended', at: new Date().toISOString(), cause }));
      setInbound((cur) => (cur?.incoming === incoming ? { ...cur, phase: 'missed' } : cur));
    });
  };
  const answer = () => {
    const cur = inbound;
    const rec = inboundRecord.current;
    if (!cur || !rec) return;
    setNotes('');
    cur.incoming.answer((e) => {
      void rec.then((r) => r.report(e));
      if (e.event === 'answered') setInbound((c) => (c?.incoming === cur.incoming ? { ...c, phase: 'answered' } : c));
      if (e.event === 'ended') setInbound((c) => (c?.incoming === cur.incoming ? { ...c, phase: 'ended' } : c));
    });
  };
  const dismissInbound = () => {
    inboundRecord.current = null;
    setInbound(undefined);
  };
  /** An answered incoming call is logged, not the task's. */
  const inboundLive = inbound && (inbound.phase === 'answered' || inbound.phase === 'ended');

  const log = async (outcome: Outcome, note?: string) => {
    if (!task || busy) return;
    setBusy(true);
    setError(undefined);
    const text = note ?? (notes.trim() ? notes : undefined);
    try {
      if (inboundLive && inboundRecord.current) {
        const r = await inboundRecord.current;
        await call('POST /api/workspaces/:workspaceId/calls/:callId/outcome', ws(workspaceId, `calls/${r.id}/outcome`), { outcome, ...(text ? { notes: text } : {}) });
        r.stop();
        dismissInbound();
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
      {inbound && (
        <IncomingCallCard
          workspaceId={workspaceId}
          from={inbound.incoming.from}
          match={inbound.match}
          phase={inbound.phase}
          onAnswer={answer}
          onDecline={() => inbound.incoming.decline()}
          onDismiss={dismissInbound}
        />
      )}
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
            onIncoming={onIncoming}
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

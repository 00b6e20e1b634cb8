import { useState } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import { Badge, ErrorNote, when } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import type { EnrollmentSend } from '../types.ts';
import { useLoad } from '../ui/use-load.ts';

const stateText = { queued: 'Queued', in_flight: 'Sending', sent: 'Sent', failed: 'Failed', cancelled: 'Cancelled', unknown: 'Unconfirmed', possibly_sent: 'Possibly sent' } as const;
const stateTone = { queued: 'info', in_flight: 'info', sent: 'ok', failed: 'bad', cancelled: 'muted', unknown: 'warn', possibly_sent: 'warn' } as const;

/**
 * One enrollment's emails, step by step, with their state. A possibly-sent step cannot be proven
 * either way, so the person decides: it is sent again only when they ask (and confirm), under the
 * same Message-ID, so a receiver that did get the first copy can drop the second.
 */
export function EnrollmentSends({ workspaceId, enrollmentId, sequenceName }: { workspaceId: string; enrollmentId: string; sequenceName: string }) {
  const sends = useLoad(() => api<{ items: EnrollmentSend[] }>('GET', ws(workspaceId, `enrollments/${enrollmentId}/sends`)), [workspaceId, enrollmentId]);
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const { ask, dialog } = useConfirm();
  const resend = async (s: EnrollmentSend) => {
    const body = 'Only do this if the prospect did not get it. It goes under the same Message-ID, so a mail server that did get the first copy can drop the second.';
    if (!(await ask({ title: `Send step “${s.stepKey}” of ${sequenceName} again?`, body, action: 'Send again', tone: 'primary' }))) return;
    setBusy(s.id);
    setError(undefined);
    try {
      await api('POST', ws(workspaceId, `enrollments/${enrollmentId}/sends/${s.id}/resend`));
      sends.reload();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(undefined);
    }
  };
  const items = sends.data?.items ?? [];
  return (
    <div className="stack">
      {dialog}
      <ErrorNote error={sends.error ?? error} />
      {items.length > 0 && (
        <ul className="plain" aria-label={`Emails of ${sequenceName}`}>
          {items.map((s) => (
            <li key={s.id}>
              <span className="strong">{s.stepKey}</span> <Badge tone={stateTone[s.state]}>{stateText[s.state]}</Badge> <span className="muted small">{when(s.updatedAt)}</span>
              {s.manualResend && s.state !== 'possibly_sent' && <span className="muted small"> · resend asked for by hand</span>}
              {s.state === 'possibly_sent' && (
                <div className="stack">
                  <p className="small">
                    Cadenza was interrupted while handing this email to the mail server and cannot tell whether it left. It counts as sent; the sequence continues. Send it again only if
                    the prospect did not get it.
                  </p>
                  <div>
                    <button type="button" className="btn" onClick={() => void resend(s)} disabled={busy === s.id} aria-label={`Send again: step ${s.stepKey} of ${sequenceName}`}>
                      {busy === s.id ? 'Sending again…' : 'Send again'}
                    </button>
                  </div>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

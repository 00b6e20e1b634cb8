import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError, call, errorMessage, ws } from '../api.ts';
import type { Erasure } from '../types.ts';
import { ErrorNote, Field } from '../ui/parts.tsx';
import { sectionCounts } from './privacy-words.ts';

/**
 * Why the server refused an erasure (409), in words that say what to do: the address is one of the
 * workspace's own (src/privacy/erase.ts refuses members, mailboxes and warmup mail), or an email to
 * the person is being handed to a mail server at this moment, or the server has no master key.
 */
export function erasureRefusal(e: unknown, email: string): string {
  if (!(e instanceof ApiError) || e.status !== 409) return errorMessage(e);
  const section = e.details.section;
  const own = 'Erasure is for the people the workspace emails, not its own.';
  if (section === 'members') return `Nothing was erased: ${email} is a member of this workspace. ${own} Take them out of the workspace first.`;
  if (section === 'mailboxes') return `Nothing was erased: ${email} is the address of one of this workspace’s mailboxes. ${own}`;
  if (section === 'warmup_mail') return `Nothing was erased: ${email} sends or receives this workspace’s warmup mail, so it is one of its mailboxes or the warmup pool’s. ${own}`;
  if (e.details.retry) return `Nothing was erased: an email to ${email} is being handed to the mail server right now. Try again in a minute.`;
  return `Nothing was erased: ${errorMessage(e)}.`;
}

/**
 * Erasure (admins): an address, then a dialog that says exactly what happens before anything does
 * (docs/privacy.md "Erasure"); the result counts what was deleted.
 */
export function EraseSubject({ workspaceId }: { workspaceId: string }) {
  const [email, setEmail] = useState('');
  const [asking, setAsking] = useState<string>();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<{ email: string; r: Erasure }>();
  const ask = (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    setAsking(email.trim());
  };
  const close = (outcome?: { done: Erasure } | { error: string }) => {
    if (outcome && 'done' in outcome) {
      setDone({ email: asking!, r: outcome.done });
      setEmail('');
    }
    if (outcome && 'error' in outcome) setError(outcome.error);
    setAsking(undefined);
  };
  return (
    <>
      <form className="stack" onSubmit={ask} aria-labelledby="privacy-erase">
        <h3 id="privacy-erase">Erase a person</h3>
        <p className="muted small" style={{ margin: 0 }}>
          Deletes everything this workspace stores about one email address, and makes sure it is never emailed again. It cannot be undone: export their data first if they asked for
          it.
        </p>
        <div className="row" style={{ alignItems: 'flex-end' }}>
          <Field label="Email address to erase">
            <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="off" />
          </Field>
          <button type="submit" className="btn btn-danger-quiet" disabled={asking !== undefined}>
            Erase…
          </button>
        </div>
        <ErrorNote error={error} />
        <div role="status" aria-live="polite">
          {done && (
            <p className="note note-ok">
              Erased {done.email}: {done.r.stopped === 1 ? '1 enrollment stopped' : `${done.r.stopped} enrollments stopped`}; deleted {sectionCounts(done.r.deleted) || 'nothing else (nothing was stored)'}. A
              keyed hash of the address stays in the suppression list.
            </p>
          )}
        </div>
      </form>
      {asking !== undefined && <ConfirmErasure workspaceId={workspaceId} email={asking} onClose={close} />}
    </>
  );
}

function ConfirmErasure({ workspaceId, email, onClose }: { workspaceId: string; email: string; onClose: (outcome?: { done: Erasure } | { error: string }) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const outcome = useRef<{ done: Erasure } | { error: string }>(undefined);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    // Focus on Cancel, so that Enter pressed by habit erases nothing. React's autoFocus does not do
    // it: it focuses on mount, and showModal() then moves the focus to the first button.
    cancel.current?.focus();
  }, []);
  const erase = async () => {
    setBusy(true);
    try {
      outcome.current = { done: await call('POST /api/workspaces/:workspaceId/privacy/erase', ws(workspaceId, 'privacy/erase'), { email, confirm: true }) };
    } catch (e) {
      outcome.current = { error: erasureRefusal(e, email) };
    }
    // Closing returns the focus to the Erase button, and the card says what happened.
    dialog.current?.close();
  };
  return (
    // Escape closes it too (the dialog's cancel), nothing erased; not while the erasure is under way,
    // or its outcome would have nowhere to show.
    <dialog ref={dialog} className="dialog" aria-labelledby="erase-title" aria-describedby="erase-what" onCancel={(e) => busy && e.preventDefault()} onClose={() => onClose(outcome.current)}>
      <div className="stack">
        <h2 id="erase-title">Erase {email} for good?</h2>
        <div id="erase-what">
          <ul className="erase-what">
            <li>Their running enrollments stop at once: nothing more is sent to them.</li>
            <li>
              Everything this workspace stores about them is deleted: the lead, enrollments, planned sends, tasks, emails sent and received, events, opens and clicks, webhook deliveries,
              rejected import rows, quarantined mail, invitations, and the audit log entries that name the address.
            </li>
            <li>
              The address itself is deleted too. Only a keyed hash of it (a fingerprint that cannot be turned back into the address) stays in the suppression list, so that an import or a
              new lead with this address is refused and they are never emailed again.
            </li>
            <li>This cannot be undone. Copies outside Cadenza (backups, your mail provider, webhook receivers) are not reached.</li>
          </ul>
        </div>
        <div className="row">
          <button type="button" className="btn btn-danger" onClick={() => void erase()} disabled={busy}>
            {busy ? 'Erasing…' : 'Erase for good'}
          </button>
          <button ref={cancel} type="button" className="btn" onClick={() => dialog.current?.close()} disabled={busy}>
            Cancel
          </button>
        </div>
      </div>
    </dialog>
  );
}

import { useState } from 'react';
import { api, errorMessage, ws } from '../api.ts';
import type { Mailbox } from '../types.ts';
import { ErrorNote } from '../ui/parts.tsx';
import { useConfirm } from '../ui/dialog.tsx';
import { EmailEditor } from './EmailEditor.tsx';

/**
 * A mailbox's signature, appended by the sender after every email's body (docs/web.md "The email
 * editor"), written in the email editor and saved through the mailbox's PATCH. On the Mailboxes
 * screen, and inside a step's signature picker (StepSignature.tsx), `nested` there: a smaller
 * heading, and the editor named for the mailbox, since a sequence can show several at once.
 */
export function SignatureForm({ workspaceId, mailbox, onSaved, nested = false }: { workspaceId: string; mailbox: Mailbox; onSaved: (m: Mailbox) => void; nested?: boolean }) {
  const [value, setValue] = useState({ subject: '', body: mailbox.signature?.text ?? '', html: mailbox.signature?.html ?? '' });
  const [stored, setStored] = useState(mailbox.signature !== null);
  // A removed signature empties the editor: a new one, since tiptap reads its content once.
  const [generation, setGeneration] = useState(0);
  const [note, setNote] = useState<string>();
  const [error, setError] = useState<string>();
  const Heading = nested ? 'h3' : 'h2';
  const send = async (html: string | null, text: string | null, done: string) => {
    setError(undefined);
    setNote(undefined);
    try {
      const m = await api<Mailbox>('PATCH', ws(workspaceId, `mailboxes/${mailbox.id}`), { signatureHtml: html, signatureText: text });
      setStored(m.signature !== null);
      setNote(done);
      onSaved(m);
      return true;
    } catch (e) {
      setError(errorMessage(e));
      return false;
    }
  };
  const { ask, dialog } = useConfirm();
  const remove = async () => {
    if (!(await ask({ title: `Remove the signature of ${mailbox.email}?`, body: 'Its emails go out without one.', action: 'Remove signature' }))) return;
    if (await send(null, null, 'Signature removed.')) {
      setValue({ subject: '', body: '', html: '' });
      setGeneration((g) => g + 1);
    }
  };
  return (
    <section className={nested ? 'stack' : 'card stack'} aria-label={`Signature of ${mailbox.email}`}>
      <Heading>Signature of {mailbox.email}</Heading>
      {dialog}
      <p className="muted">Added after the body of every email this mailbox sends (HTML and plain text).</p>
      <EmailEditor
        key={generation}
        name={nested ? `the signature of ${mailbox.email}` : 'the signature'}
        label={nested ? `Signature text of ${mailbox.email}` : 'Signature text'}
        value={value}
        onChange={(p) => setValue((v) => ({ ...v, ...p }))}
      />
      <div className="row">
        <button type="button" className="btn btn-primary" onClick={() => void send(value.html, value.body, 'Signature saved.')}>
          Save signature
        </button>
        {stored && (
          <button type="button" className="btn btn-quiet" onClick={() => void remove()}>
            Remove signature
          </button>
        )}
      </div>
      {note && <p role="status">{note}</p>}
      <ErrorNote error={error} />
    </section>
  );
}

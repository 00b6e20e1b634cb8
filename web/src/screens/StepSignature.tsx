import { useEffect, useId, useState } from 'react';
import { EditorContent, useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { withSignature } from '../../../src/common/email-html.ts';
import { api, errorMessage, ws } from '../api.ts';
import type { Mailbox, StepDraft } from '../types.ts';
import { ErrorNote, Field } from '../ui/parts.tsx';
import { SignatureForm } from './SignatureForm.tsx';

/**
 * A step's signature, from the email editor (issue 19; docs/web.md "The email editor"): the
 * step's choice between the sending mailbox's signature and none (the definition's `signature:
 * false`, which the sender reads: mailbox/signature.ts stepSignature), and a preview of the email
 * ending with the signature of any of the workspace's mailboxes, marked where one has none, made
 * by the function the sender appends it with (common/email-html.ts withSignature). The picked
 * mailbox's signature can be written or changed here, through the mailbox's own PATCH
 * (SignatureForm.tsx, as on the Mailboxes screen). The mailboxes are read when it is opened.
 */

export function mailboxName(m: Pick<Mailbox, 'email' | 'displayName'>): string {
  return m.displayName ? `${m.displayName} <${m.email}>` : m.email;
}

export function StepSignature({ workspaceId, name, step, onChange }: { workspaceId: string; name: string; step: StepDraft; onChange: (signature: boolean | undefined) => void }) {
  const [open, setOpen] = useState(false);
  const [mailboxes, setMailboxes] = useState<Mailbox[]>();
  const [picked, setPicked] = useState('');
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string>();
  const group = useId();
  const on = step.signature !== false;
  const load = () =>
    api<{ mailboxes: Mailbox[] }>('GET', ws(workspaceId, 'mailboxes')).then(
      (r) => setMailboxes([...r.mailboxes].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0))),
      (e: unknown) => setError(errorMessage(e)),
    );
  const chosen = mailboxes?.find((m) => m.id === picked) ?? mailboxes?.[0];
  const shown = withSignature({ text: step.body, html: step.html }, on ? chosen?.signature : null);
  return (
    <div className="stack">
      <div>
        <button type="button" className="btn btn-quiet" aria-expanded={open} onClick={() => (open || void load(), setOpen(!open))}>
          Signature of {name}: {on ? "the sending mailbox's" : 'none'}
        </button>
      </div>
      {open && (
        <section className="stack signature-picker" aria-label={`Signature of ${name}`}>
          <fieldset className="stack">
            <legend>{name} is sent with</legend>
            <label className="check">
              {/* Left out of the step when it is the default, so a sequence saved before the choice existed reads the same. */}
              <input type="radio" name={group} checked={on} onChange={() => onChange(undefined)} /> The sending mailbox's signature
            </label>
            <label className="check">
              <input type="radio" name={group} checked={!on} onChange={() => onChange(false)} /> No signature
            </label>
          </fieldset>
          {mailboxes === undefined ? (
            !error && <p className="muted">Reading the mailboxes…</p>
          ) : !chosen ? (
            <p className="muted">No mailbox yet: connect one on the Mailboxes screen to give it a signature.</p>
          ) : (
            <>
              <Field label={`Preview ${name} with the signature of`} hint="Each email carries the signature of the mailbox that sends it.">
                <select value={chosen.id} onChange={(e) => (setPicked(e.target.value), setEditing(false))}>
                  {mailboxes.map((m) => (
                    <option key={m.id} value={m.id}>
                      {mailboxName(m)}
                      {m.signature ? '' : ' (no signature)'}
                    </option>
                  ))}
                </select>
              </Field>
              <p className="muted small">
                {!on ? 'Sent without a signature, whichever mailbox sends it.' : chosen.signature ? `Ends with the signature of ${chosen.email}, as the sender appends it.` : `${chosen.email} has no signature: its emails end with the body.`}
              </p>
              <div className="mail signature-preview" role="region" aria-label={`${name} as sent from ${chosen.email}`}>
                {shown.html ? <ReadOnlyRichText label={`Formatted text of ${name} as sent from ${chosen.email}`} html={shown.html} /> : <pre className="mail-body">{shown.text}</pre>}
                {shown.html && (
                  <details>
                    <summary>Plain-text part</summary>
                    <pre className="mail-body">{shown.text}</pre>
                  </details>
                )}
              </div>
              <div>
                <button type="button" className="btn btn-quiet" aria-expanded={editing} onClick={() => setEditing(!editing)}>
                  {chosen.signature ? 'Edit' : 'Write'} the signature of {chosen.email}
                </button>
              </div>
              {editing && <SignatureForm key={chosen.id} nested workspaceId={workspaceId} mailbox={chosen} onSaved={(m) => setMailboxes((all) => all?.map((x) => (x.id === m.id ? m : x)))} />}
            </>
          )}
          <ErrorNote error={error} />
        </section>
      )}
    </div>
  );
}

/**
 * Formatted text shown, not edited: the editor's own schema reads it, so the preview formats as
 * the editor does and no markup from the HTML reaches the page except what that schema allows.
 */
function ReadOnlyRichText({ label, html }: { label: string; html: string }) {
  const editor = useEditor({
    injectCSS: false,
    editable: false,
    extensions: [StarterKit.configure({ link: { openOnClick: false } })],
    content: html,
    // tiptap makes it a textbox: a read-only one, named for what it shows.
    editorProps: { attributes: { class: 'rich-text rich-text-shown', role: 'textbox', 'aria-readonly': 'true', 'aria-multiline': 'true', 'aria-label': label } },
  });
  useEffect(() => {
    if (editor && editor.getHTML() !== html) editor.commands.setContent(html, { emitUpdate: false });
  }, [editor, html]);
  return <EditorContent editor={editor} />;
}

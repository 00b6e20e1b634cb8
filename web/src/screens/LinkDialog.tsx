import { useId, useRef, useState, type FormEvent } from 'react';
import { keepFocusInside, useModal } from '../ui/dialog.tsx';
import { Field } from '../ui/parts.tsx';
import { linkAddress } from './link-address.ts';

/**
 * The email editor's Link dialog: a modal <dialog> (the page behind is inert, Tab and Shift+Tab
 * go round its controls, Escape closes it; showModal focuses its first field, the address) with the address in plain words checked before it is set (link-address.ts),
 * and, on an existing link, its address to change or the link to remove. It is mounted while open;
 * the editor keeps its selection meanwhile (ProseMirror holds it in its state, not in the DOM), so
 * the link wraps the text that was selected. window.prompt did the same job with no check, no
 * way to remove a link, and no label a screen reader could tie to the editor.
 */
export function LinkDialog({
  name,
  current,
  text,
  onApply,
  onRemove,
  onClose,
}: {
  /** The editor's name (Step 1, the signature), in the dialog's title. */
  name: string;
  /** The address of the link at the caret; '' when there is none. */
  current: string;
  /** The text the link will wrap; '' : the address itself is inserted as the link's text. */
  text: string;
  onApply: (href: string) => void;
  onRemove: () => void;
  onClose: () => void;
}) {
  const ref = useModal(true);
  const titleId = useId();
  const [value, setValue] = useState(current);
  const [problem, setProblem] = useState<string>();
  const input = useRef<HTMLInputElement>(null);
  // Closed before the editor acts: the browser gives the focus back to where it was on close, and
  // the editor's command then takes it into the text.
  const finish = (act: () => void) => {
    ref.current?.close();
    act();
  };
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const r = linkAddress(value);
    if (!r.ok) {
      setProblem(r.problem);
      input.current?.focus();
      return;
    }
    finish(() => onApply(r.href));
  };
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose} onKeyDown={keepFocusInside}>
      <h2 id={titleId}>{current ? `Edit the link in ${name}` : `Add a link to ${name}`}</h2>
      <form className="stack" noValidate onSubmit={apply}>
        {text ? <p className="muted link-text">Links the text “{text.length > 80 ? `${text.slice(0, 80)}…` : text}”.</p> : <p className="muted">No text selected: the address is inserted as the link's text.</p>}
        <Field label="Link address" hint="A web page (https://…) or an email address (mailto:…)." error={problem}>
          <input
            ref={input}
            type="text"
            inputMode="url"
            autoComplete="off"
            spellCheck={false}
            value={value}
            onChange={(e) => (setValue(e.target.value), setProblem(undefined))}
          />
        </Field>
        <div className="row">
          <button type="submit" className="btn btn-primary">
            {current ? 'Update link' : 'Add link'}
          </button>
          {current && (
            <button type="button" className="btn btn-quiet" onClick={() => finish(onRemove)}>
              Remove link
            </button>
          )}
          <button type="button" className="btn btn-quiet" onClick={() => ref.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

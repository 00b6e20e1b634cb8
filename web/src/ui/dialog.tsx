import { useCallback, useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';

/** A <dialog>'s element, shown as modal while `open` (showModal: focus kept inside, Escape closes, focus given back). */
export function useModal(open: boolean) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return ref;
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

/**
 * A modal dialog's keydown: Tab from its last control goes to its first, Shift+Tab from its first
 * to its last. showModal makes the page behind inert, but Chromium still lets Tab leave the last
 * control for the browser's own controls, so the focus leaves the dialog.
 */
export function keepFocusInside(e: KeyboardEvent<HTMLElement>): void {
  if (e.key !== 'Tab') return;
  const all = Array.from(e.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)).filter((x) => x.offsetParent !== null || x === document.activeElement);
  const first = all[0];
  const last = all[all.length - 1];
  if (!first || !last) return;
  const at = document.activeElement;
  if (e.shiftKey && (at === first || !e.currentTarget.contains(at))) (e.preventDefault(), last.focus());
  else if (!e.shiftKey && (at === last || !e.currentTarget.contains(at))) (e.preventDefault(), first.focus());
}

/**
 * A modal <dialog> for a quick choice (the inbox's label, snooze and assign pickers): the browser
 * keeps focus inside it, closes it on Escape and gives focus back to where it was. Screen
 * shortcuts stand down while it is open (shortcuts.tsx isTyping).
 */
export function ModalDialog({ open, onClose, title, children }: { open: boolean; onClose: () => void; title: string; children: ReactNode }) {
  const ref = useModal(open);
  const titleId = useId();
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose}>
      <h2 id={titleId}>{title}</h2>
      {open && children}
      <form method="dialog" className="row">
        <button type="submit" className="btn btn-quiet">
          Cancel
        </button>
      </form>
    </dialog>
  );
}

/** What a confirmation asks: the question, what follows, and the action's button, named for it ("Delete template", never "OK"). */
export interface ConfirmRequest {
  title: string;
  body: ReactNode;
  action: string;
  /** 'danger' (the default): the action deletes or cannot be undone, its button filled red. */
  tone?: 'danger' | 'primary';
}

/**
 * The in-app confirmation that replaced window.confirm: a modal alertdialog named by its question
 * and described by its consequence. Cancel has the focus, so that Enter pressed by habit does
 * nothing (as the mailbox removal and the CRM disconnect); Escape cancels; the browser gives the
 * focus back to the button that asked when the dialog closes. Its one answer comes from the close
 * event, whichever way it closed.
 */
export function ConfirmDialog({ request, onAnswer }: { request: ConfirmRequest; onAnswer: (yes: boolean) => void }) {
  const ref = useModal(true);
  const cancel = useRef<HTMLButtonElement>(null);
  const yes = useRef(false);
  const titleId = useId();
  const bodyId = useId();
  // After showModal (useModal's effect runs first): showModal focuses the first control, the action.
  useEffect(() => cancel.current?.focus(), []);
  const close = (answer: boolean) => {
    yes.current = answer;
    ref.current?.close();
  };
  return (
    <dialog ref={ref} className="dialog" role="alertdialog" aria-labelledby={titleId} aria-describedby={bodyId} onClose={() => onAnswer(yes.current)} onKeyDown={keepFocusInside}>
      <div className="stack">
        <h2 id={titleId}>{request.title}</h2>
        <div id={bodyId}>{typeof request.body === 'string' ? <p style={{ margin: 0 }}>{request.body}</p> : request.body}</div>
        <div className="row">
          <button type="button" className={`btn ${request.tone === 'primary' ? 'btn-primary' : 'btn-danger'}`} onClick={() => close(true)}>
            {request.action}
          </button>
          <button ref={cancel} type="button" className="btn" onClick={() => close(false)}>
            Cancel
          </button>
        </div>
      </div>
    </dialog>
  );
}

/**
 * A screen's confirmations: `ask` opens ConfirmDialog and resolves with the answer; `dialog` is
 * rendered anywhere in the screen. One question at a time: asking again answers the open one "no".
 */
export function useConfirm(): { ask: (request: ConfirmRequest) => Promise<boolean>; dialog: ReactNode } {
  const [open, setOpen] = useState<{ n: number; request: ConfirmRequest; answer: (yes: boolean) => void }>();
  const ask = useCallback(
    (request: ConfirmRequest) =>
      new Promise<boolean>((resolve) =>
        setOpen((was) => {
          was?.answer(false);
          return { n: (was?.n ?? 0) + 1, request, answer: resolve };
        }),
      ),
    [],
  );
  const dialog = open ? <ConfirmDialog key={open.n} request={open.request} onAnswer={(yes) => (setOpen(undefined), open.answer(yes))} /> : null;
  return { ask, dialog };
}

import { useEffect, useId, useRef, type KeyboardEvent, type ReactNode } from 'react';

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

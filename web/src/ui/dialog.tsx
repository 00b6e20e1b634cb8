import { useEffect, useId, useRef, type ReactNode } from 'react';

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

import { useEffect, useId, useRef } from 'react';

export interface Shortcut {
  key: string;
  what: string;
}

/** Whether a key press is typing in a field (or a chord with a modifier) rather than a screen's shortcut. */
export function isTyping(e: KeyboardEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.altKey) return true;
  const t = e.target;
  if (!(t instanceof HTMLElement)) return false;
  return t.isContentEditable || t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || t.closest('dialog[open]') !== null;
}

/**
 * Single-key shortcuts for one screen, while it is open. `onKey` answers whether it used the key;
 * a used key does nothing else (no scroll on j, no "?" typed anywhere).
 */
export function useShortcuts(onKey: (key: string, e: KeyboardEvent) => boolean): void {
  const latest = useRef(onKey);
  latest.current = onKey;
  useEffect(() => {
    const on = (e: KeyboardEvent) => {
      if (e.defaultPrevented || isTyping(e)) return;
      if (latest.current(e.key, e)) e.preventDefault();
    };
    addEventListener('keydown', on);
    return () => removeEventListener('keydown', on);
  }, []);
}

/**
 * The list of a screen's shortcuts in a modal <dialog>: the browser keeps focus inside it, closes
 * it on Escape and gives focus back to where it was.
 */
export function ShortcutsDialog({ open, onClose, shortcuts }: { open: boolean; onClose: () => void; shortcuts: readonly Shortcut[] }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose}>
      <h2 id={titleId}>Keyboard shortcuts</h2>
      <dl className="keys">
        {shortcuts.map((s) => (
          <div key={s.key} className="keys-row">
            <dt>
              <kbd>{s.key}</kbd>
            </dt>
            <dd>{s.what}</dd>
          </div>
        ))}
      </dl>
      <form method="dialog">
        <button type="submit" className="btn">
          Close
        </button>
      </form>
    </dialog>
  );
}

import { createContext, useContext, useEffect, useId, useRef } from 'react';
import { useModal } from './dialog.tsx';

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

/** A screen's shortcuts, listed in the global `?` dialog above the ones that work anywhere. */
export interface ShortcutGroup {
  title: string;
  shortcuts: readonly Shortcut[];
}

/** The Shell's shortcuts dialog, as the screens see it. */
export interface ShortcutsHelp {
  show(): void;
  /** Lists the screen's shortcuts while it is open; returns the undo. */
  register(group: ShortcutGroup): () => void;
}

export const ShortcutsContext = createContext<ShortcutsHelp>({ show: () => undefined, register: () => () => undefined });

/** Lists a screen's shortcuts in the global dialog while the screen is open; returns what opens the dialog. */
export function useScreenShortcuts(group: ShortcutGroup): () => void {
  const help = useContext(ShortcutsContext);
  useEffect(() => help.register(group), [help, group]);
  return help.show;
}

/**
 * The list of shortcuts in a modal <dialog>: the browser keeps focus inside it, closes
 * it on Escape and gives focus back to where it was.
 */
export function ShortcutsDialog({ open, onClose, groups }: { open: boolean; onClose: () => void; groups: readonly ShortcutGroup[] }) {
  const ref = useModal(open);
  const titleId = useId();
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose}>
      <h2 id={titleId}>Keyboard shortcuts</h2>
      {groups.map((g) => (
        <section key={g.title} aria-label={g.title}>
          <h3>{g.title}</h3>
          <dl className="keys">
            {g.shortcuts.map((s) => (
              <div key={s.key} className="keys-row">
                <dt>
                  {s.key.split(' ').map((k, i) => (
                    <span key={i}>
                      {i > 0 && ' then '}
                      <kbd>{k}</kbd>
                    </span>
                  ))}
                </dt>
                <dd>{s.what}</dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
      <form method="dialog">
        <button type="submit" className="btn">
          Close
        </button>
      </form>
    </dialog>
  );
}

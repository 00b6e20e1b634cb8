import { useState } from 'react';
import type { InboxMessage, Member, TeamLabel } from '../types.ts';
import { ModalDialog } from '../ui/dialog.tsx';
import { fromLocalInput, snoozeChoices } from './inbox-snooze.ts';

/** Which picker is open, for which message. */
export type Picker = { kind: 'snooze' | 'assign' | 'label'; message: InboxMessage } | null;

/**
 * The keyboard-first pickers of the inbox: s snooze, a assign, l label. Each opens on its first
 * choice; arrows or Tab move, Enter picks, Escape cancels (focus goes back to the message).
 */
export function InboxPickers({
  picker,
  onClose,
  members,
  labels,
  onSnooze,
  onAssign,
  onToggleLabel,
  onCreateLabel,
}: {
  picker: Picker;
  onClose: () => void;
  members: Member[];
  labels: TeamLabel[];
  onSnooze: (until: Date) => void;
  onAssign: (userId: string | null) => void;
  onToggleLabel: (label: TeamLabel, on: boolean) => void;
  onCreateLabel: (name: string) => void;
}) {
  const m = picker?.message;
  return (
    <>
      <ModalDialog open={picker?.kind === 'snooze'} onClose={onClose} title="Snooze until">
        <SnoozeChoices onPick={onSnooze} />
      </ModalDialog>
      <ModalDialog open={picker?.kind === 'assign'} onClose={onClose} title="Assign to">
        <div className="pick-list" onKeyDown={arrowKeys}>
          {members.map((u, i) => (
            <button key={u.id} type="button" className="btn pick" autoFocus={i === 0} aria-pressed={m?.assigneeId === u.id} onClick={() => onAssign(u.id)}>
              {u.name ?? u.email}
              {u.name && <span className="muted small"> {u.email}</span>}
            </button>
          ))}
          <button type="button" className="btn btn-quiet pick" onClick={() => onAssign(null)}>
            Nobody (unassign)
          </button>
        </div>
      </ModalDialog>
      <ModalDialog open={picker?.kind === 'label'} onClose={onClose} title="Label">
        {m && <LabelChoices message={m} labels={labels} onToggle={onToggleLabel} onCreate={onCreateLabel} />}
      </ModalDialog>
    </>
  );
}

/** Up and down move between the picker's buttons. */
function arrowKeys(e: React.KeyboardEvent<HTMLElement>) {
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
  const buttons = [...e.currentTarget.querySelectorAll<HTMLButtonElement>('button')];
  const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
  const next = buttons[Math.max(0, Math.min(buttons.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)))];
  next?.focus();
  e.preventDefault();
}

function SnoozeChoices({ onPick }: { onPick: (until: Date) => void }) {
  const [custom, setCustom] = useState('');
  const [now] = useState(() => new Date());
  const until = fromLocalInput(custom);
  return (
    <div className="stack">
      <div className="pick-list" onKeyDown={arrowKeys}>
        {snoozeChoices(now).map((c, i) => (
          <button key={c.key} type="button" className="btn pick" autoFocus={i === 0} onClick={() => onPick(c.until)}>
            {c.label}
          </button>
        ))}
      </div>
      <form className="row" onSubmit={(e) => (e.preventDefault(), until && until > new Date() && onPick(until))}>
        <label className="field">
          <span className="field-label">Or until</span>
          <input type="datetime-local" value={custom} onChange={(e) => setCustom(e.target.value)} />
        </label>
        <button type="submit" className="btn" disabled={!until || until <= now}>
          Snooze
        </button>
      </form>
    </div>
  );
}

/**
 * The team's labels, each a toggle for this message; typing filters them, and Enter puts on (or
 * takes off) the one that matches, or defines a new label of that name and puts it on.
 */
function LabelChoices({ message, labels, onToggle, onCreate }: { message: InboxMessage; labels: TeamLabel[]; onToggle: (l: TeamLabel, on: boolean) => void; onCreate: (name: string) => void }) {
  const [text, setText] = useState('');
  const has = (l: TeamLabel) => message.teamLabels.some((x) => x.id === l.id);
  const shown = labels.filter((l) => l.name.toLowerCase().startsWith(text.trim().toLowerCase()));
  const exact = labels.find((l) => l.name.toLowerCase() === text.trim().toLowerCase());
  const submit = () => {
    const pick = exact ?? (shown.length === 1 ? shown[0] : undefined);
    if (pick) onToggle(pick, !has(pick));
    else if (text.trim()) onCreate(text.trim());
  };
  return (
    <div className="stack">
      <form onSubmit={(e) => (e.preventDefault(), submit())}>
        <input autoFocus value={text} onChange={(e) => setText(e.target.value)} aria-label="Find or create a label" placeholder="Type to find or create…" maxLength={40} />
      </form>
      <div className="pick-list" onKeyDown={arrowKeys}>
        {shown.map((l) => (
          <button key={l.id} type="button" className="btn pick" aria-pressed={has(l)} onClick={() => onToggle(l, !has(l))}>
            <span className={`team-label team-label-${l.color}`}>{l.name}</span> {has(l) ? '✓ on this message' : ''}
          </button>
        ))}
        {text.trim() && !exact && (
          <button type="button" className="btn btn-quiet pick" onClick={() => onCreate(text.trim())}>
            Create “{text.trim()}” and put it on
          </button>
        )}
      </div>
    </div>
  );
}

import { useId } from 'react';

/** A retention period as edited: a number of days as typed, or kept until deleted (null to the API). */
export interface DaysOrKeepValue {
  days: string;
  keep: boolean;
}

export function daysOrKeep(v: number | null, suggested: number): DaysOrKeepValue {
  return v === null ? { days: String(suggested), keep: true } : { days: String(v), keep: false };
}

/**
 * One retention period: "Keep until deleted", or a number of days within the kind's range. The
 * group's legend names the kind, so a screen reader says "Message text, group" before "Delete after
 * (days)"; the hint says what the data is and why the floor. Unticking the box brings back the
 * number last typed (or a suggested one), never an empty field the person has to think about.
 */
export function DaysOrKeep({ legend, hint, min, max, value, onChange }: { legend: string; hint: string; min: number; max: number; value: DaysOrKeepValue; onChange: (v: DaysOrKeepValue) => void }) {
  const id = useId();
  return (
    <fieldset className="days-or-keep" aria-describedby={`${id}-hint`}>
      <legend>{legend}</legend>
      <p className="field-hint" id={`${id}-hint`}>
        {hint}
      </p>
      <label className="check">
        <input type="checkbox" checked={value.keep} onChange={(e) => onChange({ ...value, keep: e.target.checked })} /> Keep until deleted
      </label>
      <div className="field">
        <label className="field-label" htmlFor={`${id}-days`}>
          Delete after (days)
        </label>
        <input
          id={`${id}-days`}
          type="number"
          inputMode="numeric"
          min={min}
          max={max}
          step={1}
          required={!value.keep}
          disabled={value.keep}
          // Kept: the field is empty rather than show a number of days that does not apply.
          value={value.keep ? '' : value.days}
          placeholder={value.keep ? 'kept' : undefined}
          aria-describedby={`${id}-range`}
          onChange={(e) => onChange({ ...value, days: e.target.value })}
        />
        <span className="field-hint" id={`${id}-range`}>
          {min} to {max} days
        </span>
      </div>
    </fieldset>
  );
}

/**
 * The snooze menu's times, in the reader's own zone (the browser's): later today, tomorrow
 * morning, next Monday morning. Pure: `now` in, instants out.
 */
export interface SnoozeChoice {
  key: string;
  label: string;
  until: Date;
}

const MORNING_HOUR = 9;

function atMorning(d: Date, addDays: number): Date {
  const x = new Date(d.getFullYear(), d.getMonth(), d.getDate() + addDays, MORNING_HOUR, 0, 0, 0);
  return x;
}

export function snoozeChoices(now: Date): SnoozeChoice[] {
  const later = new Date(now.getTime() + 3 * 3_600_000);
  // Monday of next week: 1..7 days ahead (a Monday snoozes to the Monday after).
  const toMonday = ((8 - now.getDay()) % 7) || 7;
  return [
    { key: 'later', label: 'Later today (in 3 hours)', until: later },
    { key: 'tomorrow', label: 'Tomorrow morning (9:00)', until: atMorning(now, 1) },
    { key: 'next-week', label: 'Next week (Monday 9:00)', until: atMorning(now, toMonday) },
  ];
}

/** A datetime-local field's value ("2030-01-07T09:00") as an instant in the browser's zone; null when empty or malformed. */
export function fromLocalInput(v: string): Date | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(v)) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

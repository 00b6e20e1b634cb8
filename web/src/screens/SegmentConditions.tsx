import { useState } from 'react';
import type { SegmentActivityCondition, SegmentFieldCondition } from '../types.ts';
import { Field } from '../ui/parts.tsx';

type FieldCondition = SegmentFieldCondition;
type ActivityCondition = SegmentActivityCondition;

/** A segment's conditions beyond the table's filters (issue 19): lead fields and activity. */
export interface Conditions {
  fields: FieldCondition[];
  activity: ActivityCondition[];
}

export const NO_CONDITIONS: Conditions = { fields: [], activity: [] };

/** The most of each kind a segment holds (the server's bound, segment-filter.ts MAX_CONDITIONS). */
const MAX_CONDITIONS = 10;

const FIELD_NAMES = { title: 'title', company: 'company', timeZone: 'time zone' } as const;
const EVENT_NAMES = { opened: 'opened', clicked: 'clicked', contacted: 'last contacted' } as const;

/** A field condition in words: "title contains “sales”", "custom field industry is set". */
export function fieldWords(c: FieldCondition): string {
  const name = c.field === 'custom' ? `custom field ${c.key}` : FIELD_NAMES[c.field];
  return c.op === 'set' ? `${name} is set` : `${name} ${c.op === 'equals' ? 'is' : 'contains'} “${c.value}”`;
}

/** An activity condition in words: "opened in the last 7 days", "never clicked", "last contacted before 2026-03-01". */
export function activityWords(c: ActivityCondition): string {
  const verb = EVENT_NAMES[c.event];
  switch (c.when) {
    case 'ever':
      return c.event === 'contacted' ? 'contacted' : verb;
    case 'never':
      return `never ${c.event === 'contacted' ? 'contacted' : verb}`;
    case 'after':
      return `${verb} on or after ${c.date.slice(0, 10)}`;
    case 'before':
      return `${verb} before ${c.date.slice(0, 10)}`;
    case 'within':
      return `${verb} in the last ${c.days} day${c.days === 1 ? '' : 's'}`;
  }
}

type Pick = '' | FieldCondition['field'] | ActivityCondition['event'];
type Op = FieldCondition['op'];
type When = ActivityCondition['when'];

/**
 * The segment editor's extra conditions: the ones added, each with a Remove button, and a row to add
 * one: a lead field (title, company, time zone, or a custom field, picked from the workspace's keys
 * or typed) with equals / contains / is set, or an activity (opened or clicked by a person, last
 * contacted) ever, never, after or before a date, or within the last N days. Every condition must
 * pass; the server checks each again.
 */
export function SegmentConditions({ value, onChange, customKeys }: { value: Conditions; onChange: (c: Conditions) => void; customKeys: string[] }) {
  const [pick, setPick] = useState<Pick>('');
  const [key, setKey] = useState('');
  const [op, setOp] = useState<Op>('contains');
  const [text, setText] = useState('');
  const [when, setWhen] = useState<When>('within');
  const [date, setDate] = useState('');
  const [days, setDays] = useState('30');
  const isField = pick === 'title' || pick === 'company' || pick === 'timeZone' || pick === 'custom';
  const isActivity = pick === 'opened' || pick === 'clicked' || pick === 'contacted';
  const full = isField ? value.fields.length >= MAX_CONDITIONS : value.activity.length >= MAX_CONDITIONS;
  const ready =
    !full &&
    (isField
      ? (pick !== 'custom' || key.trim() !== '') && (op === 'set' || text.trim() !== '')
      : isActivity && (when === 'ever' || when === 'never' || (when === 'within' ? Number(days) >= 1 && Number(days) <= 3650 && Number.isInteger(Number(days)) : /^\d{4}-\d{2}-\d{2}$/.test(date))));
  const add = () => {
    if (!ready) return;
    if (isField) {
      const base = { field: pick, ...(pick === 'custom' ? { key: key.trim() } : {}) };
      const c: FieldCondition = op === 'set' ? { ...base, op } : { ...base, op, value: text.trim() };
      onChange({ ...value, fields: [...value.fields, c] });
      setText('');
    } else if (isActivity) {
      const c: ActivityCondition = when === 'within' ? { event: pick, when, days: Number(days) } : when === 'after' || when === 'before' ? { event: pick, when, date } : { event: pick, when };
      onChange({ ...value, activity: [...value.activity, c] });
    }
  };
  const all = [...value.fields.map((c, i) => ({ words: fieldWords(c), drop: () => onChange({ ...value, fields: value.fields.filter((_, j) => j !== i) }) })), ...value.activity.map((c, i) => ({ words: activityWords(c), drop: () => onChange({ ...value, activity: value.activity.filter((_, j) => j !== i) }) }))];
  return (
    <fieldset className="stack segment-conditions">
      <legend>Lead fields and activity</legend>
      {all.length > 0 && (
        <ul className="conditions" aria-label="Conditions">
          {all.map((c) => (
            <li key={c.words} className="row">
              <span>{c.words}</span>
              <button type="button" className="btn btn-quiet" aria-label={`Remove the condition ${c.words}`} onClick={c.drop}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="row bulk-fields">
        <Field label="Condition">
          <select value={pick} onChange={(e) => setPick(e.target.value as Pick)}>
            <option value="">Choose a field or an activity</option>
            <optgroup label="Lead field">
              <option value="title">Title</option>
              <option value="company">Company</option>
              <option value="timeZone">Time zone</option>
              <option value="custom">Custom field…</option>
            </optgroup>
            <optgroup label="Activity">
              <option value="opened">Opened by a person</option>
              <option value="clicked">Clicked by a person</option>
              <option value="contacted">Last contacted (email sent)</option>
            </optgroup>
          </select>
        </Field>
        {pick === 'custom' && (
          <Field label="Custom field" hint={customKeys.length ? undefined : 'No lead has a custom field yet: type its name'}>
            <input list="segment-custom-keys" maxLength={100} value={key} onChange={(e) => setKey(e.target.value)} />
          </Field>
        )}
        <datalist id="segment-custom-keys">
          {customKeys.map((k) => (
            <option key={k} value={k} />
          ))}
        </datalist>
        {isField && (
          <Field label="Test">
            <select value={op} onChange={(e) => setOp(e.target.value as Op)}>
              <option value="contains">contains</option>
              <option value="equals">is (any case)</option>
              <option value="set">is set</option>
            </select>
          </Field>
        )}
        {isField && op !== 'set' && (
          <Field label="Value">
            <input maxLength={200} value={text} onChange={(e) => setText(e.target.value)} />
          </Field>
        )}
        {isActivity && (
          <Field label="When">
            <select value={when} onChange={(e) => setWhen(e.target.value as When)}>
              <option value="within">in the last N days</option>
              <option value="after">on or after a date</option>
              <option value="before">before a date</option>
              <option value="ever">ever</option>
              <option value="never">never</option>
            </select>
          </Field>
        )}
        {isActivity && when === 'within' && (
          <Field label="Days">
            <input type="number" min={1} max={3650} value={days} onChange={(e) => setDays(e.target.value)} />
          </Field>
        )}
        {isActivity && (when === 'after' || when === 'before') && (
          <Field label="Date" hint="Midnight UTC">
            <input type="date" value={date} onChange={(e) => setDate(e.target.value)} />
          </Field>
        )}
        <button type="button" className="btn" disabled={!ready} onClick={add}>
          Add condition
        </button>
      </div>
      {full && <p className="muted small">At most {MAX_CONDITIONS} of each kind.</p>}
    </fieldset>
  );
}

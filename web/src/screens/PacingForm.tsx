import { useEffect, useState } from 'react';
import { api } from '../api.ts';
import type { Pacing as PacingView } from '../types.ts';
import { ErrorNote, Field } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { useSubmit } from '../ui/use-submit.ts';

/**
 * Every pacing setting of a workspace (defaults for its mailboxes) or of one mailbox (overrides),
 * over GET/PATCH …/pacing (src/api/routes/pacing.ts). An empty field is not set here: it inherits
 * (the workspace's default for a mailbox, the built-in one for a workspace), shown as its
 * placeholder. Saving sends every field: set ones as values, empty ones in `reset`.
 */

type Level = PacingView['own'];

const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

type Draft = Record<
  'dailyCap' | 'hourlyCap' | 'rampStart' | 'rampStep' | 'rampTarget' | 'gapMinSeconds' | 'gapMaxSeconds' | 'ceilingMin' | 'ceilingMax' | 'dayStart' | 'dayEnd' | 'dayJitterMinutes' | 'lunchAt' | 'pickupMinutes',
  string
> & { ramp: 'inherit' | 'none' | 'set'; lunch: 'inherit' | 'none' | 'set'; spreadDay: 'inherit' | 'on' | 'off'; workDays: number[] | null };

const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));

function draftOf(own: Level): Draft {
  const p = own.pacing as { gapMinutes?: [number, number]; hourlyCeiling?: [number, number]; lunch?: { at?: string } | null; spreadDay?: boolean; workDays?: number[] };
  const r = own.caps.ramp;
  return {
    dailyCap: str(own.caps.dailyCap),
    hourlyCap: str(own.caps.hourlyCap),
    ramp: r === undefined ? 'inherit' : r === null ? 'none' : 'set',
    rampStart: str(r?.start),
    rampStep: str(r?.step),
    rampTarget: str(r?.target),
    gapMinSeconds: p.gapMinutes ? String(Math.round(p.gapMinutes[0] * 60)) : '',
    gapMaxSeconds: p.gapMinutes ? String(Math.round(p.gapMinutes[1] * 60)) : '',
    spreadDay: p.spreadDay === undefined ? 'inherit' : p.spreadDay ? 'on' : 'off',
    ceilingMin: str(p.hourlyCeiling?.[0]),
    ceilingMax: str(p.hourlyCeiling?.[1]),
    workDays: p.workDays ?? null,
    dayStart: str(own.pacing.dayStart),
    dayEnd: str(own.pacing.dayEnd),
    dayJitterMinutes: str(own.pacing.dayJitterMinutes),
    lunch: p.lunch === undefined ? 'inherit' : p.lunch === null ? 'none' : 'set',
    lunchAt: str(p.lunch?.at),
    pickupMinutes: str(own.pacing.pickupMinutes),
  };
}

/** The PATCH body: every field either set or reset, so the form is the whole truth of this level. */
function patchOf(d: Draft, own: Level): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const reset: string[] = [];
  const num = (key: string, v: string, scale = 1) => (v.trim() === '' ? reset.push(key) : (body[key] = Number(v) * scale));
  num('dailyCap', d.dailyCap);
  num('hourlyCap', d.hourlyCap);
  if (d.ramp === 'inherit') reset.push('ramp');
  else body.ramp = d.ramp === 'none' ? null : { start: Number(d.rampStart), step: Number(d.rampStep), ...(d.rampTarget.trim() ? { target: Number(d.rampTarget) } : {}) };
  if (d.gapMinSeconds.trim() === '' && d.gapMaxSeconds.trim() === '') reset.push('gapMinutes');
  else body.gapMinutes = [Number(d.gapMinSeconds || d.gapMaxSeconds) / 60, Number(d.gapMaxSeconds || d.gapMinSeconds) / 60];
  if (d.spreadDay === 'inherit') reset.push('spreadDay');
  else body.spreadDay = d.spreadDay === 'on';
  if (d.ceilingMin.trim() === '' && d.ceilingMax.trim() === '') reset.push('hourlyCeiling');
  else body.hourlyCeiling = [Number(d.ceilingMin || d.ceilingMax), Number(d.ceilingMax || d.ceilingMin)];
  if (d.workDays === null) reset.push('workDays');
  else body.workDays = d.workDays;
  for (const k of ['dayStart', 'dayEnd'] as const) d[k].trim() === '' ? reset.push(k) : (body[k] = d[k].trim());
  num('dayJitterMinutes', d.dayJitterMinutes);
  num('pickupMinutes', d.pickupMinutes);
  if (d.lunch === 'inherit') reset.push('lunch');
  else if (d.lunch === 'none') body.lunch = null;
  else body.lunch = { ...((own.pacing.lunch as object | null | undefined) ?? {}), at: d.lunchAt.trim() };
  body.reset = reset;
  return body;
}

export function PacingForm({ url, title, canEdit, inheritsFrom }: { url: string; title: string; canEdit: boolean; inheritsFrom: string }) {
  const view = useLoad(() => api<PacingView>('GET', url), [url]);
  const [d, setD] = useState<Draft>();
  const [saved, setSaved] = useState<string>();
  useEffect(() => {
    if (view.data) setD(draftOf(view.data.own));
  }, [view.data]);
  const { busy, error, submit } = useSubmit(async () => {
    if (!d || !view.data) return;
    setSaved(undefined);
    const r = await api<PacingView>('PATCH', url, patchOf(d, view.data.own));
    setD(draftOf(r.own));
    setSaved('Pacing saved.');
    view.reload();
  });
  const e = view.data?.effective;
  const set = (patch: Partial<Draft>) => d && setD({ ...d, ...patch });
  const text = (k: keyof Draft, label: string, hint: string, placeholder: string, type = 'number') =>
    d && (
      <Field label={label} hint={hint}>
        <input type={type} value={d[k] as string} placeholder={placeholder} onChange={(ev) => set({ [k]: ev.target.value } as Partial<Draft>)} />
      </Field>
    );
  const id = `pacing-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <p className="muted small">An empty field follows {inheritsFrom}; its value in force is shown greyed.</p>
      <ErrorNote error={view.error} />
      {d && e && (
        <fieldset disabled={!canEdit} className="stack plain-fieldset">
          <div className="grid-3">
            {text('dailyCap', 'Daily cap', 'Most emails a day once ramped up.', String(e.dailyCap))}
            {text('hourlyCap', 'Hourly cap', 'Most emails in any hour.', e.hourlyCap === null ? 'none' : String(e.hourlyCap))}
            <Field label="Ramp-up">
              <select value={d.ramp} onChange={(ev) => set({ ramp: ev.target.value as Draft['ramp'] })}>
                <option value="inherit">Inherit{e.ramp ? ` (${e.ramp.start} a day +${e.ramp.step})` : ' (none)'}</option>
                <option value="none">No ramp</option>
                <option value="set">Ramp up</option>
              </select>
            </Field>
          </div>
          {d.ramp === 'set' && (
            <div className="grid-3">
              {text('rampStart', 'Ramp start (a day)', 'Emails on the first day.', '5')}
              {text('rampStep', 'Ramp step (a day)', 'Added each day.', '3')}
              {text('rampTarget', 'Ramp target', 'Empty: the daily cap.', String(e.dailyCap))}
            </div>
          )}
          <div className="grid-3">
            {text('gapMinSeconds', 'Shortest gap between sends (seconds)', 'Down to 10 s for minute-scale sequences.', String(Math.round(e.gapMinutes[0] * 60)))}
            {text('gapMaxSeconds', 'Longest gap between sends (seconds)', 'A gap is drawn between the two.', String(Math.round(e.gapMinutes[1] * 60)))}
            <Field label="Spread a quiet day" hint="Stretch gaps so a small budget spreads over the day.">
              <select value={d.spreadDay} onChange={(ev) => set({ spreadDay: ev.target.value as Draft['spreadDay'] })}>
                <option value="inherit">Inherit ({e.spreadDay ? 'on' : 'off'})</option>
                <option value="on">On</option>
                <option value="off">Off: gaps stay within the range</option>
              </select>
            </Field>
            {text('ceilingMin', 'Hourly ceiling, low', "Each day's ceiling per rolling hour is drawn from low-high.", String(e.hourlyCeiling[0]))}
            {text('ceilingMax', 'Hourly ceiling, high', '', String(e.hourlyCeiling[1]))}
            {text('pickupMinutes', 'Pickup delay (minutes)', 'A due send leaves up to this long after it is due; 0: at once.', String(e.pickupMinutes))}
          </div>
          <fieldset>
            <legend>Working days</legend>
            <label className="check">
              <input type="checkbox" checked={d.workDays === null} onChange={(ev) => set({ workDays: ev.target.checked ? null : e.workDays })} /> Inherit ({e.workDays.map((x) => DAYS[x - 1]).join(', ')})
            </label>
            {d.workDays !== null &&
              DAYS.map((name, i) => (
                <label key={name} className="check">
                  <input
                    type="checkbox"
                    checked={d.workDays!.includes(i + 1)}
                    onChange={(ev) => set({ workDays: ev.target.checked ? [...d.workDays!, i + 1].sort() : d.workDays!.filter((x) => x !== i + 1) })}
                  />{' '}
                  {name}
                </label>
              ))}
          </fieldset>
          <div className="grid-3">
            {text('dayStart', 'Working day starts', "HH:MM in the mailbox's zone.", e.dayStart, 'text')}
            {text('dayEnd', 'Working day ends', 'HH:MM.', e.dayEnd, 'text')}
            {text('dayJitterMinutes', 'Day start/end jitter (minutes)', 'Each day moves by up to this much; 0: exact hours.', String(e.dayJitterMinutes))}
            <Field label="Lunch break">
              <select value={d.lunch} onChange={(ev) => set({ lunch: ev.target.value as Draft['lunch'] })}>
                <option value="inherit">Inherit ({e.lunch ? `at ${e.lunch.at}` : 'none'})</option>
                <option value="none">No lunch break</option>
                <option value="set">At a time</option>
              </select>
            </Field>
            {d.lunch === 'set' && text('lunchAt', 'Lunch starts', 'HH:MM.', e.lunch?.at ?? '12:15', 'text')}
          </div>
        </fieldset>
      )}
      <ErrorNote error={error} />
      {saved && (
        <p className="note note-ok" role="status">
          {saved}
        </p>
      )}
      {canEdit && (
        <div>
          <button type="submit" className="btn btn-primary" disabled={busy || !d}>
            {busy ? 'Saving…' : `Save ${title.toLowerCase()}`}
          </button>
        </div>
      )}
    </form>
  );
}

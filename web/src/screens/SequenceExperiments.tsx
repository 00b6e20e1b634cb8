import { useEffect, useState } from 'react';
import type { ArmChoiceDraft, ExperimentArmDraft, ExperimentSettingsDraft, FlowStep, SequenceExperimentDraft, StepDraft } from '../types.ts';
import { isBranch } from '../types.ts';
import { Field } from '../ui/parts.tsx';
import { useProblem } from './flow-problems.ts';
import { freshKey } from './flow-keys.ts';

/**
 * Experiments in the flow editor (issue 18, docs/experiments.md): the settings of an email step's
 * A/B test, and the sequence experiments, whose arms fix a variant, a delay or send hours on
 * several steps, or run some steps in another order. They edit the same draft as the rest of the
 * editor (the API's body), so the YAML view shows them as `cadenza sequence export` writes them.
 * The rules are the server's: a refused save shows each problem next to its field.
 */

const outcomes: Array<[NonNullable<ExperimentSettingsDraft['outcome']>, string]> = [
  ['replied', 'A reply'],
  ['positive', 'A positive reply (by intent)'],
  ['meetings', 'A booked meeting'],
];

/** A number input's value: empty is "not set" (the default applies). */
const numberOrUnset = (text: string): number | undefined => (text.trim() === '' ? undefined : Number(text));

/** Reply window, outcome, alpha, minimum sample and automatic winner; `path` is where the server's problems about them point. */
export function ExperimentSettingsFields({ name, path, value, onChange }: { name: string; path: string; value: ExperimentSettingsDraft; onChange: (v: ExperimentSettingsDraft) => void }) {
  const set = <K extends keyof ExperimentSettingsDraft>(k: K, v: ExperimentSettingsDraft[K] | undefined) => {
    const next = { ...value };
    if (v === undefined) delete next[k];
    else next[k] = v;
    onChange(next);
  };
  const problem = {
    replyWindowDays: useProblem(`${path}.replyWindowDays`),
    outcome: useProblem(`${path}.outcome`),
    alpha: useProblem(`${path}.alpha`),
    minSamplePerArm: useProblem(`${path}.minSamplePerArm`),
    autoWinner: useProblem(`${path}.autoWinner`),
  };
  return (
    <div className="stack">
      <div className="grid-3">
        <Field label={`${name} reply window (days)`} hint="Outcomes count for this many days after each send. Empty: 14." error={problem.replyWindowDays}>
          <input type="number" placeholder="14" value={value.replyWindowDays ?? ''} onChange={(e) => set('replyWindowDays', numberOrUnset(e.target.value))} />
        </Field>
        <Field label={`${name} outcome`} hint="What the test judges the arms on." error={problem.outcome}>
          <select value={value.outcome ?? 'replied'} onChange={(e) => set('outcome', e.target.value as ExperimentSettingsDraft['outcome'])}>
            {outcomes.map(([v, text]) => (
              <option key={v} value={v}>
                {text}
              </option>
            ))}
          </select>
        </Field>
        <Field label={`${name} alpha`} hint="The false positive rate the test guarantees, however often you look. Empty: 0.05." error={problem.alpha}>
          <input type="number" step="any" placeholder="0.05" value={value.alpha ?? ''} onChange={(e) => set('alpha', numberOrUnset(e.target.value))} />
        </Field>
        <Field label={`${name} minimum sends per arm`} hint="Closed sends each arm needs before any winner. Empty: 200." error={problem.minSamplePerArm}>
          <input type="number" placeholder="200" value={value.minSamplePerArm ?? ''} onChange={(e) => set('minSamplePerArm', numberOrUnset(e.target.value))} />
        </Field>
      </div>
      <label className="check">
        <input type="checkbox" checked={value.autoWinner ?? false} onChange={(e) => set('autoWinner', e.target.checked || undefined)} /> {name}: automatic winner
      </label>
      <span className="field-hint">Once the test names a winner, every new enrollment gets the winning arm; without it you decide (e.g. set the loser's weight to 0).</span>
      {problem.autoWinner && <span className="field-error text-bad">{problem.autoWinner}</span>}
    </div>
  );
}

/** The A/B settings of an email step with two variants or more, or why they are not the step's. */
export function StepExperimentFields({ name, path, step, fixedBy, onChange }: { name: string; path: string; step: StepDraft; fixedBy: string | undefined; onChange: (experiment: ExperimentSettingsDraft | undefined) => void }) {
  if (step.type !== 'email' || step.variants.length === 0) return null;
  return (
    <fieldset className="stack">
      <legend>{name} A/B test</legend>
      {fixedBy ? (
        <p className="muted small">The variants of this step are arms of the sequence experiment "{fixedBy}": its settings apply (below the steps).</p>
      ) : (
        <ExperimentSettingsFields name={`${name} A/B test`} path={`${path}.experiment`} value={step.experiment ?? {}} onChange={(x) => onChange(Object.keys(x).length ? x : undefined)} />
      )}
    </fieldset>
  );
}

/** Every ordinary step of the draft, top level and in branch arms, in order. */
function plainSteps(steps: FlowStep[]): StepDraft[] {
  return steps.flatMap((s) => (isBranch(s) ? s.branches.flatMap((a) => a.steps) : [s]));
}

/** A step's variant keys: the first (the step's own subject and body) and the others. */
export function variantKeys(s: StepDraft): string[] {
  return [s.variantKey ?? 'a', ...s.variants.map((v) => v.key)];
}

/** By step key, the sequence experiment that fixes its variant (its own A/B settings would not apply). */
export function variantOwners(experiments: SequenceExperimentDraft[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const x of experiments) for (const a of x.arms) for (const c of a.steps) if (c.variant !== undefined) out.set(c.step, x.key);
  return out;
}

type Dim = 'variant' | 'delay' | 'sendHours';
const dimNames: Record<Dim, string> = { variant: 'variant', delay: 'delay', sendHours: 'send hours' };

/** The steps an experiment touches, in the order first named, and what its arms set on each. */
function touched(x: SequenceExperimentDraft): Array<{ step: string; dims: Set<Dim> }> {
  const out = new Map<string, Set<Dim>>();
  for (const a of x.arms)
    for (const c of a.steps) {
      const dims = out.get(c.step) ?? new Set<Dim>();
      for (const d of ['variant', 'delay', 'sendHours'] as const) if (c[d] !== undefined) dims.add(d);
      out.set(c.step, dims);
    }
  return [...out].map(([step, dims]) => ({ step, dims }));
}

/** The hours of the sequence's window ("Mon-Fri 09:00-17:00" → 09:00-17:00), a new send-hours choice's start. */
function windowHours(window: string): string {
  const m = /(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})/.exec(window);
  return m ? `${m[1]}-${m[2]}` : '09:00-12:00';
}

/** Arm j's first value of a dimension on a step: variants in turn, the step's own delay, the window's hours. */
function firstValue(dim: Dim, s: StepDraft | undefined, j: number, window: string): string {
  if (dim === 'variant') {
    const keys = s ? variantKeys(s) : ['a'];
    return keys[j % keys.length]!;
  }
  return dim === 'delay' ? (s?.delay ?? '1 day') : windowHours(window);
}

function withChoice(arm: ExperimentArmDraft, step: string, patch: Partial<ArmChoiceDraft>): ExperimentArmDraft {
  const has = arm.steps.some((c) => c.step === step);
  return { ...arm, steps: has ? arm.steps.map((c) => (c.step === step ? { ...c, ...patch } : c)) : [...arm.steps, { step, ...patch }] };
}

function withoutDim(arm: ExperimentArmDraft, step: string, dim: Dim): ExperimentArmDraft {
  const steps = arm.steps.map((c) => {
    if (c.step !== step) return c;
    const { [dim]: _gone, ...rest } = c;
    return rest;
  });
  // A choice left with nothing to set is no choice.
  return { ...arm, steps: steps.filter((c) => c.step !== step || Object.keys(c).length > 1) };
}

/** A list of step keys typed as text ("follow, ring"), kept as typed while it reads as the same list. */
function KeyListInput({ label, hint, error, value, onChange }: { label: string; hint: string; error: string | undefined; value: string[] | undefined; onChange: (v: string[] | undefined) => void }) {
  const parse = (t: string) => t.split(/[\s,]+/).filter(Boolean);
  const [text, setText] = useState((value ?? []).join(', '));
  useEffect(() => {
    if (parse(text).join(',') !== (value ?? []).join(',')) setText((value ?? []).join(', '));
    // Only when the draft changes from elsewhere (the YAML view, a removed step).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [(value ?? []).join(',')]);
  return (
    <Field label={label} hint={hint} error={error}>
      <input
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          const keys = parse(e.target.value);
          onChange(keys.length ? keys : undefined);
        }}
      />
    </Field>
  );
}

/** One arm: its key, weight, what it sets on each step of the experiment, and an order. */
function ArmFields({
  name,
  path,
  arm,
  j,
  rows,
  byKey,
  onChange,
  onRemove,
}: {
  name: string;
  path: string;
  arm: ExperimentArmDraft;
  j: number;
  rows: Array<{ step: string; dims: Set<Dim> }>;
  byKey: Map<string, StepDraft>;
  onChange: (a: ExperimentArmDraft) => void;
  onRemove: (() => void) | undefined;
}) {
  const armProblem = useProblem(path);
  const keyProblem = useProblem(`${path}.key`);
  const weightProblem = useProblem(`${path}.weight`);
  const orderProblem = useProblem(`${path}.order`);
  return (
    <fieldset className="stack" aria-label={name}>
      <legend>
        {name}: {arm.key}
        {j === 0 ? ' (control)' : ''}
      </legend>
      {armProblem && <p className="field-error text-bad">{armProblem}</p>}
      <div className="grid-3">
        <Field label={`${name} key`} error={keyProblem}>
          <input value={arm.key} onChange={(e) => onChange({ ...arm, key: e.target.value })} />
        </Field>
        <Field label={`${name} weight`} hint="Share of new enrollments, against the other arms' weights." error={weightProblem}>
          <input type="number" min={0} max={1000} value={arm.weight} onChange={(e) => onChange({ ...arm, weight: Number(e.target.value) })} />
        </Field>
      </div>
      {rows.map(({ step, dims }) => {
        const c = arm.steps.find((x) => x.step === step);
        const s = byKey.get(step);
        return (
          <div key={step} className="grid-3">
            {[...dims].map((d) => (
              <ChoiceField key={d} name={`${name} ${step} ${dimNames[d]}`} paths={[`${path}.steps.${step}.${d}`, `${path}.steps.${arm.steps.findIndex((x) => x.step === step)}.${d}`, `${path}.steps.${step}`]} dim={d} value={c?.[d] ?? ''} step={s} onChange={(v) => onChange(withChoice(arm, step, { [d]: v }))} />
            ))}
          </div>
        );
      })}
      <KeyListInput
        label={`${name} step order`}
        hint="Step keys in the order this arm runs them, e.g. follow, ring. Empty: the sequence's order."
        error={orderProblem}
        value={arm.order}
        onChange={(order) => {
          const { order: _o, ...rest } = arm;
          onChange(order ? { ...rest, order } : rest);
        }}
      />
      {onRemove && (
        <div>
          <button type="button" className="btn btn-quiet" onClick={onRemove}>
            Remove {name.replace(/^Experiment/, 'experiment')}
          </button>
        </div>
      )}
    </fieldset>
  );
}

function ChoiceField({ name, paths, dim, value, step, onChange }: { name: string; paths: string[]; dim: Dim; value: string; step: StepDraft | undefined; onChange: (v: string) => void }) {
  const error = useProblem(...paths);
  if (dim === 'variant') {
    const keys = step ? variantKeys(step) : [];
    return (
      <Field label={name} error={error}>
        <select value={value} onChange={(e) => onChange(e.target.value)}>
          {!keys.includes(value) && <option value={value}>{value || '(choose a variant)'}</option>}
          {keys.map((k) => (
            <option key={k} value={k}>
              {k.toUpperCase()}
            </option>
          ))}
        </select>
      </Field>
    );
  }
  return (
    <Field label={name} hint={dim === 'delay' ? 'e.g. 2 business days' : 'HH:MM-HH:MM in the lead\'s zone, inside the send window'} error={error}>
      <input value={value} onChange={(e) => onChange(e.target.value)} />
    </Field>
  );
}

/** One sequence experiment: key, the steps it touches and what it sets on each, its arms, its settings. */
function ExperimentCard({
  name,
  path,
  x,
  steps,
  window,
  taken,
  onChange,
  onRemove,
}: {
  name: string;
  path: string;
  x: SequenceExperimentDraft;
  steps: StepDraft[];
  window: string;
  /** Steps another experiment already touches (a step belongs to one). */
  taken: Set<string>;
  onChange: (x: SequenceExperimentDraft) => void;
  onRemove: () => void;
}) {
  const byKey = new Map(steps.map((s) => [s.key, s]));
  const rows = touched(x);
  const problem = useProblem(path, `${path}.arms`, `${path}.order`);
  const keyProblem = useProblem(`${path}.key`);
  const setArms = (f: (a: ExperimentArmDraft, j: number) => ExperimentArmDraft) => onChange({ ...x, arms: x.arms.map(f) });
  // What an arm can set on a step (definition-experiments.ts): a variant where there are several, send hours where something is sent or done.
  const dimsFor = (s: StepDraft | undefined): Dim[] => (!s || s.type === 'wait' ? ['delay'] : s.type === 'email' && s.variants.length > 0 ? ['variant', 'delay', 'sendHours'] : ['delay', 'sendHours']);
  const addStep = (key: string) => {
    const s = byKey.get(key);
    const dim: Dim = s?.type === 'email' && s.variants.length > 0 ? 'variant' : 'delay';
    setArms((a, j) => withChoice(a, key, { [dim]: firstValue(dim, s, j, window) }));
  };
  const candidates = steps.filter((s) => !rows.some((r) => r.step === s.key) && !taken.has(s.key));
  const { key: _k, arms: _a, ...settings } = x;
  return (
    <section className="card stack flow-card" aria-label={name}>
      <div className="step-head">
        <h3>
          {name}: {x.key}
        </h3>
        <button type="button" className="btn btn-quiet" onClick={onRemove}>
          Remove {name.replace(/^Experiment/, 'experiment')}
        </button>
      </div>
      {problem && <p className="field-error text-bad">{problem}</p>}
      <Field label={`${name} key`} hint="Its identity: keep it while the experiment runs." error={keyProblem}>
        <input value={x.key} onChange={(e) => onChange({ ...x, key: e.target.value })} />
      </Field>
      <fieldset className="stack">
        <legend>{name}: what the arms set</legend>
        {rows.length === 0 && <p className="muted small">No step yet: add the steps whose variant, delay or send hours the arms choose (or give an arm a step order).</p>}
        {rows.map(({ step, dims }) => {
          const s = byKey.get(step);
          return (
            <div key={step} className="row" role="group" aria-label={`${name} step ${step}`}>
              <strong>{step}</strong>
              {dimsFor(s).map((d) => (
                <label key={d} className="check">
                  <input
                    type="checkbox"
                    checked={dims.has(d)}
                    onChange={(e) => setArms((a, j) => (e.target.checked ? withChoice(a, step, { [d]: firstValue(d, s, j, window) }) : withoutDim(a, step, d)))}
                  />{' '}
                  {dimNames[d]}
                </label>
              ))}
              <button type="button" className="btn btn-quiet" onClick={() => setArms((a) => ({ ...a, steps: a.steps.filter((c) => c.step !== step) }))}>
                Remove {step} from {name.replace(/^Experiment/, 'experiment')}
              </button>
            </div>
          );
        })}
        {candidates.length > 0 && (
          <Field label={`${name}: add a step`}>
            <select value="" onChange={(e) => e.target.value && addStep(e.target.value)}>
              <option value="">Choose a step…</option>
              {candidates.map((s) => (
                <option key={s.key} value={s.key}>
                  {s.key} ({s.type}
                  {s.variants.length ? `, ${s.variants.length + 1} variants` : ''})
                </option>
              ))}
            </select>
          </Field>
        )}
      </fieldset>
      <div className="stack">
        {x.arms.map((a, j) => (
          <ArmFields
            key={j}
            name={`${name} arm ${j + 1}`}
            path={`${path}.arms.${j}`}
            arm={a}
            j={j}
            rows={rows}
            byKey={byKey}
            onChange={(next) => onChange({ ...x, arms: x.arms.map((b, k) => (k === j ? next : b)) })}
            onRemove={x.arms.length > 2 ? () => onChange({ ...x, arms: x.arms.filter((_, k) => k !== j) }) : undefined}
          />
        ))}
        <div>
          <button
            type="button"
            className="btn btn-quiet"
            disabled={x.arms.length >= 8}
            onClick={() => {
              const j = x.arms.length;
              const arm: ExperimentArmDraft = { key: freshKey('arm', new Set(x.arms.map((a) => a.key))), weight: 1, steps: [] };
              const filled = rows.reduce((acc, r) => withChoice(acc, r.step, Object.fromEntries([...r.dims].map((d) => [d, firstValue(d, byKey.get(r.step), j, window)]))), arm);
              onChange({ ...x, arms: [...x.arms, filled] });
            }}
          >
            Add an arm to {name.replace(/^Experiment/, 'experiment')}
          </button>
        </div>
      </div>
      <fieldset className="stack">
        <legend>{name} settings</legend>
        <ExperimentSettingsFields name={name} path={path} value={settings} onChange={(next) => onChange({ key: x.key, ...next, arms: x.arms })} />
      </fieldset>
    </section>
  );
}

/** The sequence's experiments, below its steps. */
export function SequenceExperiments({ experiments, steps, window, onChange }: { experiments: SequenceExperimentDraft[]; steps: FlowStep[]; window: string; onChange: (x: SequenceExperimentDraft[]) => void }) {
  const plain = plainSteps(steps);
  const owners = (except: number) => new Set(experiments.flatMap((x, i) => (i === except ? [] : [...x.arms.flatMap((a) => a.steps.map((c) => c.step)), ...x.arms.flatMap((a) => a.order ?? [])])));
  const add = () => {
    const key = freshKey('experiment', new Set(experiments.map((x) => x.key)));
    const taken = owners(-1);
    const arms: ExperimentArmDraft[] = [
      { key: 'a', weight: 1, steps: [] },
      { key: 'b', weight: 1, steps: [] },
    ];
    // A first step to vary: an A/B email step no experiment has yet and without its own settings, else a later step's delay.
    const ab = plain.find((s) => s.type === 'email' && s.variants.length > 0 && !taken.has(s.key) && !s.experiment);
    const later = plain.slice(1).find((s) => !taken.has(s.key));
    const first = ab ?? later;
    const dim: Dim = ab ? 'variant' : 'delay';
    onChange([...experiments, { key, arms: first ? arms.map((a, j) => withChoice(a, first.key, { [dim]: firstValue(dim, first, j, window) })) : arms }]);
  };
  return (
    <section className="card stack" aria-label="Sequence experiments">
      <h2>Sequence experiments</h2>
      <p className="muted small">
        An experiment over several steps or their timing: each enrollment draws one arm when it enrolls and keeps it. An arm can send a chosen variant of an email step, wait another delay before a step, send it in
        narrower hours, or run some steps in another order. Results are under Experiments once the sequence sends.
      </p>
      {experiments.map((x, i) => (
        <ExperimentCard
          key={i}
          name={`Experiment ${i + 1}`}
          path={`experiments.${i}`}
          x={x}
          steps={plain}
          window={window}
          taken={owners(i)}
          onChange={(next) => onChange(experiments.map((y, k) => (k === i ? next : y)))}
          onRemove={() => onChange(experiments.filter((_, k) => k !== i))}
        />
      ))}
      <div>
        <button type="button" className="btn" onClick={add} disabled={experiments.length >= 10}>
          Add a sequence experiment
        </button>
      </div>
    </section>
  );
}

import { useState } from 'react';
import type { ArmDraft, BranchDraft, Condition, FlowStep, MoveTo, StepDraft } from '../types.ts';
import { callOutcomes, isBranch, leadFields } from '../types.ts';
import { Field } from '../ui/parts.tsx';
import { EmailEditor } from './EmailEditor.tsx';
import { freshKey } from './flow-keys.ts';
import { StepExperimentFields } from './SequenceExperiments.tsx';
import { StepSignature } from './StepSignature.tsx';

/**
 * The sequence editor's flow view (issue 18): steps as cards on one vertical line, the wait before
 * each step on the connector above it (click it to edit that step's delay), a step inserted from
 * any connector, and a branch's arms as columns side by side that rejoin below it (or end, or move
 * the lead to another sequence). The cards are edited in place; the YAML view shows the same draft.
 */

export type StepKind = StepDraft['type'] | 'branch';
const kindNames: Record<StepKind, string> = { email: 'Email', call: 'Call task', manual: 'Manual task', wait: 'Wait', branch: 'Branch' };

/** Every key the draft uses (steps, arm steps, arms): a new one must differ from all. */
export function usedKeys(steps: FlowStep[]): Set<string> {
  const keys = new Set<string>();
  for (const s of steps) {
    keys.add(s.key);
    if (isBranch(s)) for (const a of s.branches) for (const x of a.steps) keys.add(x.key);
  }
  return keys;
}

export { freshKey };

/** A new ordinary step; the first of a sequence is an email due at enrollment, with a subject. */
export function newStep(type: StepDraft['type'], key: string, first: boolean): StepDraft {
  return {
    key,
    type,
    delay: first ? '0 minutes' : type === 'wait' ? '1 day' : '3 business days',
    subject: type === 'email' && first ? 'Quick question, {{first_name | default: "there"}}' : '',
    body: type === 'email' ? (first ? '{Hi|Hello} {{first_name | default: "there"}},\n\n' : 'Hi {{first_name | default: "there"}}, following up.') : '',
    html: '',
    title: '',
    variants: [],
  };
}

/** A new branch: "opened the last email?" (or "has a company?" before any email), and the default arm. */
export function newBranch(before: FlowStep[], used: Set<string>): BranchDraft {
  const lastEmail = [...before].reverse().find((s): s is StepDraft => !isBranch(s) && s.type === 'email');
  const key = freshKey('branch', used);
  used.add(key);
  const armStep = newStep('email', freshKey('step', used), false);
  return {
    key,
    type: 'branch',
    delay: '2 business days',
    branches: [
      { key: 'yes', when: lastEmail ? { opened: lastEmail.key } : { lead: { field: 'company', exists: true } }, then: 'continue', steps: [armStep] },
      { key: 'otherwise', then: 'continue', steps: [] },
    ],
  };
}

/** "Wait 2 business days" on the connector above a step. */
export function waitText(delay: string, first: boolean): string {
  if (/^\s*0\s*[a-z ]*$/i.test(delay)) return first ? 'Starts at enrollment' : 'No wait';
  return first ? `Wait ${delay} after enrollment` : `Wait ${delay}`;
}

/** The line between two cards: the wait (edited in place) and, optionally, an insert menu. */
export function Connector({ name, delay, first, onDelay, onInsert }: { name: string; delay: string; first: boolean; onDelay: (d: string) => void; onInsert?: (k: StepKind) => void }) {
  const [editing, setEditing] = useState(false);
  return (
    <div className="flow-connector">
      {editing ? (
        <div className="flow-delay-edit row">
          <Field label={`Delay before ${name}`} hint="e.g. 2 business days, 4 hours">
            <input
              autoFocus
              value={delay}
              onChange={(e) => onDelay(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' || e.key === 'Escape') (e.preventDefault(), setEditing(false));
              }}
            />
          </Field>
          <button type="button" className="btn btn-quiet" onClick={() => setEditing(false)}>
            Done
          </button>
        </div>
      ) : (
        <button type="button" className="flow-wait" onClick={() => setEditing(true)}>
          {waitText(delay, first)}
          <span className="sr-only"> before {name}: edit the delay</span>
        </button>
      )}
      {onInsert && <InsertMenu name={name} onInsert={onInsert} />}
    </div>
  );
}

/** The add-step menu on a connector: which kind of step to insert there. */
function InsertMenu({ name, onInsert, kinds = ['email', 'call', 'manual', 'wait', 'branch'] }: { name: string; onInsert: (k: StepKind) => void; kinds?: StepKind[] }) {
  const [open, setOpen] = useState(false);
  return (
    <span className="flow-insert">
      <button type="button" className="flow-plus" aria-expanded={open} onClick={() => setOpen(!open)}>
        +<span className="sr-only"> Insert a step before {name}</span>
      </button>
      {open && (
        <span role="group" aria-label={`Insert before ${name}`} className="row flow-menu">
          {kinds.map((k) => (
            <button key={k} type="button" className="btn btn-quiet" onClick={() => (setOpen(false), onInsert(k))}>
              {kindNames[k]}
            </button>
          ))}
        </span>
      )}
    </span>
  );
}

/** One ordinary step's card, edited in place; `name` prefixes every label ("Step 2", "Step 3 arm 1 step 1"). */
export function StepCard({
  name,
  step: s,
  first,
  onChange,
  onRemove,
  onPreview,
  workspaceId,
  previewing,
  path,
  fixedBy,
}: {
  name: string;
  step: StepDraft;
  first: boolean;
  /** Where the server's problems about this step point ("steps.2", "steps.3.branches.0.steps.1"). */
  path: string;
  /** The sequence experiment that fixes this step's variant, if any. */
  fixedBy?: string | undefined;
  onChange: (patch: Partial<StepDraft>) => void;
  onRemove?: () => void;
  onPreview?: (variant?: number) => void;
  /** For the email editor's template library. */
  workspaceId?: string | undefined;
  previewing?: boolean;
}) {
  const Heading = name.includes(' arm ') ? 'h4' : 'h2';
  return (
    <div className="card stack flow-card">
      <div className="step-head">
        <Heading>{name}</Heading>
        {onPreview && (
          <button type="button" className="btn btn-quiet" onClick={() => onPreview()} aria-pressed={previewing}>
            Preview
          </button>
        )}
        {onRemove && (
          <button type="button" className="btn btn-quiet" onClick={onRemove}>
            Remove {name.toLowerCase().startsWith('step') ? name.replace(/^Step/, 'step') : name}
          </button>
        )}
      </div>
      <div className="grid-3">
        <Field label={`${name} type`}>
          <select value={s.type} onChange={(e) => onChange({ type: e.target.value as StepDraft['type'] })}>
            <option value="email">Email</option>
            <option value="call">Call task</option>
            <option value="manual">Manual task</option>
            <option value="wait">Wait</option>
          </select>
        </Field>
        <Field label={`${name} delay`} hint={first ? 'After enrollment.' : 'After the previous step.'}>
          <input value={s.delay} onChange={(e) => onChange({ delay: e.target.value })} />
        </Field>
        <Field label={`${name} key`} hint="Its identity across edits.">
          <input value={s.key} onChange={(e) => onChange({ key: e.target.value })} />
        </Field>
      </div>
      {s.type === 'email' && (
        <>
          <Field label={`${name} subject`} hint={!first ? 'Empty: a reply in the same thread (Re: the first subject).' : 'Empty: a subsequence; it continues the thread of the sequence a lead is moved from (Re: its subject), and leads enter it only by a move.'}>
            <input value={s.subject} onChange={(e) => onChange({ subject: e.target.value })} />
          </Field>
          <EmailEditor name={name} label={`${name} body`} workspaceId={workspaceId} value={s} onChange={(patch) => onChange(patch)} />
          {workspaceId && <StepSignature workspaceId={workspaceId} name={name} step={s} onChange={(signature) => onChange({ signature })} />}
          {s.variants.map((v, j) => {
            const vname = `${name} variant ${v.key.toUpperCase()}`;
            const setVariant = (patch: Partial<StepDraft['variants'][number]>) => onChange({ variants: s.variants.map((x, k) => (k === j ? { ...x, ...patch } : x)) });
            return (
              <fieldset key={v.key} className="stack">
                <legend>{vname}</legend>
                <div className="grid-3">
                  <Field label={`${vname} subject`}>
                    <input value={v.subject} onChange={(e) => setVariant({ subject: e.target.value })} />
                  </Field>
                  <Field label={`${vname} weight`} hint="Against 1 for the first.">
                    <input type="number" min={0} max={1000} value={v.weight} onChange={(e) => setVariant({ weight: Number(e.target.value) })} />
                  </Field>
                  <div className="row">
                    <button type="button" className="btn btn-quiet" onClick={() => onChange({ variants: s.variants.filter((_, k) => k !== j) })}>
                      Remove {vname}
                    </button>
                  </div>
                </div>
                <EmailEditor name={vname} label={`${vname} body`} workspaceId={workspaceId} value={v} onChange={(patch) => setVariant(patch)} onFocus={() => onPreview?.(j)} />
              </fieldset>
            );
          })}
          <div>
            <button
              type="button"
              className="btn btn-quiet"
              onClick={() => {
                const used = new Set(['a', ...s.variants.map((v) => v.key)]);
                const key = 'bcdefghijk'.split('').find((k) => !used.has(k)) ?? `v${s.variants.length + 2}`;
                onChange({ variants: [...s.variants, { key, subject: s.subject, body: s.body, html: s.html, weight: 1 }] });
              }}
            >
              Add a variant (A/B test)
            </button>
          </div>
          <StepExperimentFields name={name} path={path} step={s} fixedBy={fixedBy} onChange={(experiment) => onChange({ experiment })} />
        </>
      )}
      {(s.type === 'call' || s.type === 'manual') && (
        <>
          <Field label={`${name} task title`}>
            <input value={s.title ?? ''} onChange={(e) => onChange({ title: e.target.value })} />
          </Field>
          <label className="check">
            <input type="checkbox" checked={s.waitForTask ?? true} onChange={(e) => onChange({ waitForTask: e.target.checked })} /> {name}: wait until the task is done
          </label>
        </>
      )}
      <Field label={`${name} notes`} hint="For the person doing the step; not sent.">
        <textarea rows={2} value={s.notes ?? ''} onChange={(e) => onChange({ notes: e.target.value })} />
      </Field>
    </div>
  );
}

type ConditionKind = 'opened' | 'clicked' | 'call_outcome' | 'lead' | 'combined';
const conditionKind = (c: Condition): ConditionKind => ('opened' in c ? 'opened' : 'clicked' in c ? 'clicked' : 'call_outcome' in c ? 'call_outcome' : 'lead' in c ? 'lead' : 'combined');

/** The arm's heading: its condition in words. */
export function conditionText(c: Condition | undefined): string {
  if (!c) return 'Otherwise';
  if ('opened' in c) return `Opened ${c.opened}`;
  if ('clicked' in c) return `Clicked in ${c.clicked}`;
  if ('call_outcome' in c) return `Call ${c.call_outcome.step}: ${c.call_outcome.in.map((o) => o.replace(/_/g, ' ')).join(' or ') || '(no outcome)'}`;
  if ('lead' in c) {
    const l = c.lead;
    const f = l.field.replace(/_/g, ' ');
    if (l.exists !== undefined) return `Lead ${f} ${l.exists ? 'is set' : 'is empty'}`;
    if (l.contains !== undefined) return `Lead ${f} contains "${l.contains}"`;
    if (l.in) return `Lead ${f} is one of ${l.in.join(', ')}`;
    return `Lead ${f} is "${l.equals ?? ''}"`;
  }
  if ('all' in c) return c.all.map(conditionText).join(' and ');
  if ('any' in c) return c.any.map(conditionText).join(' or ');
  return `Not (${conditionText(c.not)})`;
}

/** The small condition editor at the head of an arm: a kind, and its argument. all/any/not are edited in YAML. */
function ConditionEditor({ name, when, onChange, emailKeys, callKeys }: { name: string; when: Condition; onChange: (c: Condition) => void; emailKeys: string[]; callKeys: string[] }) {
  const kind = conditionKind(when);
  const setKind = (k: ConditionKind) => {
    if (k === 'opened') onChange({ opened: emailKeys.at(-1) ?? '' });
    else if (k === 'clicked') onChange({ clicked: emailKeys.at(-1) ?? '' });
    else if (k === 'call_outcome') onChange({ call_outcome: { step: callKeys.at(-1) ?? '', in: ['connected'] } });
    else if (k === 'lead') onChange({ lead: { field: 'company', exists: true } });
  };
  const stepSelect = (label: string, keys: string[], value: string, set: (v: string) => void) => (
    <Field label={label}>
      <select value={value} onChange={(e) => set(e.target.value)}>
        {!keys.includes(value) && <option value={value}>{value || '(choose a step)'}</option>}
        {keys.map((k) => (
          <option key={k} value={k}>
            {k}
          </option>
        ))}
      </select>
    </Field>
  );
  return (
    <div className="stack condition">
      <Field label={`${name} condition`}>
        <select value={kind} onChange={(e) => setKind(e.target.value as ConditionKind)}>
          <option value="opened">Opened an email</option>
          <option value="clicked">Clicked in an email</option>
          <option value="call_outcome">Call outcome</option>
          <option value="lead">Lead field</option>
          {kind === 'combined' && (
            <option value="combined" disabled>
              Combined (edit in YAML)
            </option>
          )}
        </select>
      </Field>
      {'opened' in when && stepSelect(`${name} opened step`, emailKeys, when.opened, (v) => onChange({ opened: v }))}
      {'clicked' in when && stepSelect(`${name} clicked step`, emailKeys, when.clicked, (v) => onChange({ clicked: v }))}
      {'call_outcome' in when && (
        <>
          {stepSelect(`${name} call step`, callKeys, when.call_outcome.step, (v) => onChange({ call_outcome: { ...when.call_outcome, step: v } }))}
          <fieldset>
            <legend>{name} outcomes</legend>
            {callOutcomes.map((o) => (
              <label key={o} className="check">
                <input
                  type="checkbox"
                  checked={when.call_outcome.in.includes(o)}
                  onChange={(e) => onChange({ call_outcome: { ...when.call_outcome, in: e.target.checked ? [...when.call_outcome.in, o] : when.call_outcome.in.filter((x) => x !== o) } })}
                />{' '}
                {o.replace(/_/g, ' ')}
              </label>
            ))}
          </fieldset>
        </>
      )}
      {'lead' in when && <LeadCondition name={name} lead={when.lead} onChange={(lead) => onChange({ lead })} />}
      {kind === 'combined' && <p className="muted small">{conditionText(when)}</p>}
    </div>
  );
}

type LeadTest = Extract<Condition, { lead: unknown }>['lead'];
function LeadCondition({ name, lead, onChange }: { name: string; lead: LeadTest; onChange: (l: LeadTest) => void }) {
  const op = lead.exists !== undefined ? (lead.exists ? 'set' : 'empty') : lead.contains !== undefined ? 'contains' : lead.in ? 'in' : 'equals';
  const value = lead.contains ?? lead.in?.join(', ') ?? lead.equals ?? '';
  const build = (o: string, v: string): LeadTest =>
    o === 'set' || o === 'empty'
      ? { field: lead.field, exists: o === 'set' }
      : o === 'contains'
        ? { field: lead.field, contains: v }
        : o === 'in'
          ? { field: lead.field, in: v.split(',').map((x) => x.trim()).filter(Boolean) }
          : { field: lead.field, equals: v };
  const listId = `${name.replace(/\W+/g, '-')}-fields`;
  return (
    <div className="grid-3">
      <Field label={`${name} lead field`} hint="Or custom.<name>">
        <input list={listId} value={lead.field} onChange={(e) => onChange({ ...lead, field: e.target.value })} />
      </Field>
      <datalist id={listId}>
        {leadFields.map((f) => (
          <option key={f} value={f} />
        ))}
      </datalist>
      <Field label={`${name} test`}>
        <select value={op} onChange={(e) => onChange(build(e.target.value, value))}>
          <option value="equals">is</option>
          <option value="in">is one of</option>
          <option value="contains">contains</option>
          <option value="set">is set</option>
          <option value="empty">is empty</option>
        </select>
      </Field>
      {op !== 'set' && op !== 'empty' && (
        <Field label={`${name} value`} hint={op === 'in' ? 'Comma-separated.' : undefined}>
          <input value={value} onChange={(e) => onChange(build(op, e.target.value))} />
        </Field>
      )}
    </div>
  );
}

/** Continue (rejoin), end, or move to another sequence after a delay: an arm's `then`, or a reply rule. */
export function MoveFields({ name, value, onChange, sequences }: { name: string; value: MoveTo; onChange: (m: MoveTo) => void; sequences: Array<{ key: string; name: string }> }) {
  return (
    <div className="grid-2">
      <Field label={`${name}: sequence`}>
        <select value={value.moveTo} onChange={(e) => onChange({ ...value, moveTo: e.target.value })}>
          {!sequences.some((s) => s.key === value.moveTo) && <option value={value.moveTo}>{value.moveTo || '(choose a sequence)'}</option>}
          {sequences.map((s) => (
            <option key={s.key} value={s.key}>
              {s.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label={`${name}: after`} hint="e.g. 4 weeks, 3 days">
        <input value={value.after} onChange={(e) => onChange({ ...value, after: e.target.value })} />
      </Field>
    </div>
  );
}

function thenText(then: ArmDraft['then'], sequences: Array<{ key: string; name: string }>): string {
  if (then === 'continue') return 'Rejoins below';
  if (then === 'end') return 'Ends the sequence';
  return `Moves to ${sequences.find((s) => s.key === then.moveTo)?.name ?? then.moveTo} after ${then.after}`;
}

/**
 * A branch step: "Branch after 2 business days: first matching arm", its arms as columns (the
 * default arm, without a condition, always last), each with its steps and what follows it.
 */
export function BranchCard({
  name,
  step,
  before,
  onChange,
  onRemove,
  used,
  sequences,
  path,
  owners,
}: {
  name: string;
  step: BranchDraft;
  path: string;
  /** By step key, the sequence experiment that fixes its variant. */
  owners: Map<string, string>;
  before: FlowStep[];
  onChange: (b: BranchDraft) => void;
  onRemove: () => void;
  used: Set<string>;
  sequences: Array<{ key: string; name: string }>;
}) {
  const emailKeys = before.filter((s) => !isBranch(s) && s.type === 'email').map((s) => s.key);
  const callKeys = before.filter((s) => !isBranch(s) && s.type === 'call').map((s) => s.key);
  const setArm = (j: number, patch: Partial<ArmDraft>) => onChange({ ...step, branches: step.branches.map((a, k) => (k === j ? { ...a, ...patch } : a)) });
  const addArm = () => {
    const keys = new Set(step.branches.map((a) => a.key));
    const arm: ArmDraft = { key: freshKey('arm', keys), when: emailKeys.length ? { clicked: emailKeys.at(-1)! } : { lead: { field: 'title', exists: true } }, then: 'continue', steps: [] };
    // Before the default arm, which stays last.
    const at = step.branches.findIndex((a) => !a.when);
    const branches = [...step.branches];
    branches.splice(at < 0 ? branches.length : at, 0, arm);
    onChange({ ...step, branches });
  };
  return (
    <div className="card stack flow-card branch">
      <div className="step-head">
        <h2>
          {name}: branch after {step.delay || '0 minutes'}
        </h2>
        <span className="muted small">first matching arm</span>
        <button type="button" className="btn btn-quiet" onClick={onRemove}>
          Remove {name.replace(/^Step/, 'step')}
        </button>
      </div>
      <div className="grid-3">
        <Field label={`${name} delay`} hint="After the previous step; then the arms are weighed.">
          <input value={step.delay} onChange={(e) => onChange({ ...step, delay: e.target.value })} />
        </Field>
        <Field label={`${name} key`} hint="Its identity across edits.">
          <input value={step.key} onChange={(e) => onChange({ ...step, key: e.target.value })} />
        </Field>
      </div>
      <div className="arms" role="list" aria-label={`${name} arms`}>
        {step.branches.map((a, j) => {
          const armName = `${name} arm ${j + 1}`;
          const setArmStep = (k: number, patch: Partial<StepDraft>) => setArm(j, { steps: a.steps.map((x, i) => (i === k ? { ...x, ...patch } : x)) });
          return (
            <section key={j} className="arm stack" role="listitem" aria-label={armName}>
              <h3>{conditionText(a.when)}</h3>
              {a.when ? <ConditionEditor name={armName} when={a.when} onChange={(when) => setArm(j, { when })} emailKeys={emailKeys} callKeys={callKeys} /> : <p className="muted small">When no arm before it matches.</p>}
              <ol className="steps flow">
                {a.steps.map((x, k) => (
                  <li key={k} aria-label={`${armName} step ${k + 1}`}>
                    <Connector name={`${armName} step ${k + 1}`} delay={x.delay} first={false} onDelay={(delay) => setArmStep(k, { delay })} />
                    <StepCard name={`${armName} step ${k + 1}`} path={`${path}.branches.${j}.steps.${k}`} fixedBy={owners.get(x.key)} step={x} first={false} onChange={(p) => setArmStep(k, p)} onRemove={() => setArm(j, { steps: a.steps.filter((_, i) => i !== k) })} />
                  </li>
                ))}
              </ol>
              <div>
                <button type="button" className="btn btn-quiet" onClick={() => setArm(j, { steps: [...a.steps, newStep('email', freshKey('step', used), false)] })}>
                  Add a step to {armName.replace(/^Step/, 'step')}
                </button>
              </div>
              <Field label={`${armName} then`}>
                <select
                  value={typeof a.then === 'string' ? a.then : 'move'}
                  onChange={(e) => setArm(j, { then: e.target.value === 'move' ? { moveTo: sequences[0]?.key ?? '', after: '0 days' } : (e.target.value as 'continue' | 'end') })}
                >
                  <option value="continue">Rejoin and continue</option>
                  <option value="end">End the sequence</option>
                  <option value="move">Move to another sequence</option>
                </select>
              </Field>
              {typeof a.then === 'object' && <MoveFields name={`${armName} moves`} value={a.then} onChange={(then) => setArm(j, { then })} sequences={sequences} />}
              <p className={`flow-then flow-then-${typeof a.then === 'string' ? a.then : 'move'}`}>{thenText(a.then, sequences)}</p>
              {a.when && step.branches.length > 2 && (
                <div>
                  <button type="button" className="btn btn-quiet" onClick={() => onChange({ ...step, branches: step.branches.filter((_, k) => k !== j) })}>
                    Remove {armName.replace(/^Step/, 'step')}
                  </button>
                </div>
              )}
            </section>
          );
        })}
      </div>
      <div className="row">
        <button type="button" className="btn btn-quiet" onClick={addArm} disabled={step.branches.length >= 8}>
          Add an arm to {name.replace(/^Step/, 'step')}
        </button>
      </div>
      <p className="flow-rejoin">{step.branches.some((a) => a.then === 'continue') ? 'Rejoin: the arms that continue go on to the next step' : 'No arm rejoins'}</p>
    </div>
  );
}

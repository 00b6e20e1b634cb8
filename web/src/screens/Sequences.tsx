import { useEffect, useState } from 'react';
import { api, call, ApiError, errorMessage, ws } from '../api.ts';
import { navigate } from '../router.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { ApiBody, ApiResponse, ContentCheckResult, EnrollResult, FlowStep, Lead, Mailbox, MoveTo, ReplyRules, SequenceDraft, SequenceSummary, StepDraft, StopRules } from '../types.ts';
import { isBranch, replyRuleIntents } from '../types.ts';
import { mailboxName } from './StepSignature.tsx';
import { BranchCard, Connector, MoveFields, StepCard, freshKey, newBranch, newStep, usedKeys, type StepKind } from './SequenceFlow.tsx';
import { Badge, Empty, ErrorNote, Field, PageHeader } from '../ui/parts.tsx';
import { EnrollOutcome } from '../ui/EnrollOutcome.tsx';
import { useLoad } from '../ui/use-load.ts';
import { ExperimentsPanel } from './ExperimentsPanel.tsx';
import { SequenceEnrollments } from './MoveEnrollments.tsx';
import { ProblemsContext, problemsOf, type Problem } from './flow-problems.ts';
import { SequenceExperiments, variantOwners } from './SequenceExperiments.tsx';
import { CsvButton } from '../ui/CsvButton.tsx';

const statusTone = { draft: 'muted', active: 'ok', paused: 'warn', archived: 'muted' } as const;

export function Sequences({ workspaceId, sub }: ScreenProps) {
  if (sub) return <SequenceEditor workspaceId={workspaceId} id={sub === 'new' ? undefined : sub} />;
  return <SequenceList workspaceId={workspaceId} />;
}

function SequenceList({ workspaceId }: { workspaceId: string }) {
  const list = useLoad(() => api<{ sequences: SequenceSummary[] }>('GET', ws(workspaceId, 'sequences')), [workspaceId]);
  const seqs = list.data?.sequences ?? [];
  return (
    <>
      <PageHeader title="Sequences">
        <a className="btn btn-primary" href="/sequences/new" onClick={(e) => (e.preventDefault(), navigate('/sequences/new'))}>
          New sequence
        </a>
      </PageHeader>
      <ErrorNote error={list.error} />
      {!list.loading && seqs.length === 0 && <Empty>No sequence yet. Create one: a few steps, a send window, and the mailboxes it sends from.</Empty>}
      {seqs.length > 0 && (
        <>
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Sequence</th>
                <th scope="col">Status</th>
                <th scope="col">Steps</th>
                <th scope="col">Active</th>
                <th scope="col">Replied</th>
              </tr>
            </thead>
            <tbody>
              {seqs.map((s) => (
                <tr key={s.id}>
                  <td>
                    <a href={`/sequences/${s.id}`} onClick={(e) => (e.preventDefault(), navigate(`/sequences/${s.id}`))}>
                      {s.name}
                    </a>
                    <div className="muted small">{s.key}</div>
                  </td>
                  <td>
                    <Badge tone={statusTone[s.status]}>{s.status}</Badge>
                  </td>
                  <td>{s.steps}</td>
                  <td>{s.active}</td>
                  <td>{s.replied}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <CsvButton
            what="the sequences"
            filename="sequences.csv"
            header={['Sequence', 'Key', 'Status', 'Steps', 'Active', 'Replied']}
            rows={seqs.map((s) => [s.name, s.key, s.status, s.steps, s.active, s.replied])}
          />
        </>
      )}
    </>
  );
}

const keyOf = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64) || 'sequence';

type PutBody = ApiBody<'PUT /api/workspaces/:workspaceId/sequences'>;

function SequenceEditor({ workspaceId, id }: { workspaceId: string; id: string | undefined }) {
  // A new sequence starts from the definition file's defaults (src/sequence/definition.ts).
  const [seq, setSeq] = useState<SequenceDraft>({
    id: '',
    key: '',
    name: '',
    status: 'active',
    window: 'Mon-Fri 09:00-17:00',
    jitterMinutes: 45,
    holidays: true,
    trackOpens: false,
    trackClicks: false,
    stopRules: {},
    mailboxes: [],
    steps: [newStep('email', 'step-1', true)],
    experiments: [],
  });
  const [warnings, setWarnings] = useState<string[]>([]);
  const [error, setError] = useState<string>();
  // A refused save's problems, each shown next to its field in the flow (flow-problems.ts).
  const [problems, setProblems] = useState<Problem[]>([]);
  const [saved, setSaved] = useState<string>();
  const [busy, setBusy] = useState(false);
  // The server's "this template renders for no lead" answer, held until the person saves anyway or goes back.
  const [unsendable, setUnsendable] = useState<string>();
  const [enrolledAt, setEnrolledAt] = useState(0);
  // Two views of one draft. The YAML text is the server's (yaml/render), read back by the server
  // (yaml/parse): the editor never parses YAML itself, so the format has one owner.
  const [view, setView] = useState<'flow' | 'yaml'>('flow');
  const [yaml, setYaml] = useState('');
  const [yamlEdited, setYamlEdited] = useState(false);
  const [yamlProblems, setYamlProblems] = useState<string[]>([]);
  const [yamlNote, setYamlNote] = useState<string[]>([]);
  const mailboxes = useLoad(() => api<{ mailboxes: Mailbox[] }>('GET', ws(workspaceId, 'mailboxes')), [workspaceId]);
  const leads = useLoad(() => api<{ leads: Lead[] }>('GET', ws(workspaceId, 'leads?limit=50')), [workspaceId]);
  const others = useLoad(() => api<{ sequences: SequenceSummary[] }>('GET', ws(workspaceId, 'sequences')), [workspaceId]);
  const targets = (others.data?.sequences ?? []).filter((x) => x.id !== seq.id).map((x) => ({ key: x.key, name: x.name }));
  const [previewStep, setPreviewStep] = useState(0);
  // -1: the step's own subject and body (variant A); else the index of one of its other variants.
  const [previewVariant, setPreviewVariant] = useState(-1);
  const previewAt = (step: number, variant = -1) => (setPreviewStep(step), setPreviewVariant(variant));
  useEffect(() => {
    if (!id) return;
    api<SequenceDraft>('GET', ws(workspaceId, `sequences/${id}`))
      .then(setSeq)
      .catch((e: unknown) => setError(errorMessage(e)));
  }, [workspaceId, id]);

  const setStep = (i: number, patch: Partial<FlowStep>) => setSeq({ ...seq, steps: seq.steps.map((s, j) => (j === i ? ({ ...s, ...patch } as FlowStep) : s)) });
  const insertStep = (at: number, kind: StepKind) => {
    const used = usedKeys(seq.steps);
    const step = kind === 'branch' ? newBranch(seq.steps.slice(0, at), used) : newStep(kind, freshKey('step', used), seq.steps.length === 0);
    setSeq({ ...seq, steps: [...seq.steps.slice(0, at), step, ...seq.steps.slice(at)] });
  };
  /** The draft as PUT and yaml/render take it. */
  const bodyOf = (d: SequenceDraft) => {
    const { id: _id, warnings: _w, version: _v, ...definition } = d;
    return { ...definition, key: d.key || keyOf(d.name), steps: d.steps.map(cleanFlowStep) } as unknown as PutBody;
  };
  /** The YAML text read by the server into a draft (the id kept); undefined, with the problems shown, if it does not read. */
  const readYaml = async (): Promise<SequenceDraft | undefined> => {
    setYamlProblems([]);
    try {
      const body = await call('POST /api/workspaces/:workspaceId/sequences/yaml/parse', ws(workspaceId, 'sequences/yaml/parse'), { yaml });
      const next = { ...(body as unknown as SequenceDraft), id: seq.id, ...(seq.version !== undefined ? { version: seq.version } : {}) };
      setSeq(next);
      setYamlEdited(false);
      return next;
    } catch (e) {
      const problems = e instanceof ApiError && Array.isArray(e.details.problems) ? (e.details.problems as string[]) : [errorMessage(e)];
      setYamlProblems(problems);
      return undefined;
    }
  };
  const toYaml = async () => {
    setError(undefined);
    try {
      const r = await call('POST /api/workspaces/:workspaceId/sequences/yaml/render', ws(workspaceId, 'sequences/yaml/render'), { body: bodyOf(seq) });
      setYaml(r.yaml);
      setYamlNote(r.problems);
      setYamlProblems([]);
      setYamlEdited(false);
      setView('yaml');
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const toFlow = async () => {
    if (!yamlEdited || (await readYaml())) setView('flow');
  };
  const save = async (confirm = false) => {
    setBusy(true);
    setError(undefined);
    setProblems([]);
    setSaved(undefined);
    setUnsendable(undefined);
    try {
      // From the YAML view, what is saved is the text as the server reads it.
      const draft = view === 'yaml' && yamlEdited ? await readYaml() : seq;
      if (!draft) return;
      const body = bodyOf(draft);
      // The whole definition goes back, every field GET gave (stop rules, holidays, tracking…): PUT
      // replaces the sequence, and a field left out would take its default (issue 10).
      const r = await call('PUT /api/workspaces/:workspaceId/sequences', ws(workspaceId, 'sequences'), { ...body, ...(confirm ? { confirm: true } : {}) });
      setSeq({ ...draft, key: body.key, id: r.sequenceId });
      setWarnings(r.warnings ?? []);
      setSaved(r.created ? 'Sequence created.' : 'Sequence saved; running enrollments follow the new steps.');
      if (!id) history.replaceState(null, '', `/sequences/${r.sequenceId}`);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'TEMPLATE_FAILS_FOR_ALL') setUnsendable(unsendableText(e.details));
      else (setError(errorMessage(e)), setProblems(problemsOf(e)));
    } finally {
      setBusy(false);
    }
  };
  const pool = (mailboxes.data?.mailboxes ?? []).filter((m) => seq.mailboxes.length === 0 || seq.mailboxes.includes(m.email));
  const used = usedKeys(seq.steps);
  const plainSteps = seq.steps.filter((s): s is StepDraft => !isBranch(s));
  const owners = variantOwners(seq.experiments);
  const previewed = seq.steps[previewStep];
  const previewedStep = previewed && !isBranch(previewed) ? previewed : undefined;

  return (
    <>
      <PageHeader title={seq.name || 'New sequence'}>
        <a className="btn btn-quiet" href="/sequences" onClick={(e) => (e.preventDefault(), navigate('/sequences'))}>
          All sequences
        </a>
      </PageHeader>
      <div className="tabs editor-tabs" role="tablist" aria-label="Editor view">
        <button type="button" role="tab" className="tab" aria-selected={view === 'flow'} onClick={() => view !== 'flow' && toFlow()}>
          Flow
        </button>
        <button type="button" role="tab" className="tab" aria-selected={view === 'yaml'} onClick={() => view !== 'yaml' && toYaml()}>
          YAML
        </button>
      </div>
      <div className="editor">
        <div className="stack">
          {view === 'yaml' && (
            <section className="card stack" aria-label="YAML">
              <Field label="Sequence definition (YAML)" hint="As `cadenza sequence export` writes it; `cadenza sequence apply` reads the same file.">
                <textarea className="yaml" rows={Math.min(40, Math.max(12, yaml.split('\n').length + 1))} spellCheck={false} value={yaml} onChange={(e) => (setYaml(e.target.value), setYamlEdited(true))} />
              </Field>
              {yamlProblems.length > 0 && (
                <ul className="note note-error" aria-label="YAML problems">
                  {yamlProblems.map((p) => (
                    <li key={p}>{p}</li>
                  ))}
                </ul>
              )}
              {yamlNote.length > 0 && !yamlEdited && (
                <ul className="note note-warn" aria-label="Not valid yet">
                  {yamlNote.map((p) => (
                    <li key={p}>{p}</li>
                  ))}
                </ul>
              )}
              <div className="row">
                <button type="button" className="btn" disabled={!yamlEdited} onClick={() => readYaml()}>
                  Apply YAML
                </button>
                {!yamlEdited && yamlProblems.length === 0 && <span className="muted small">In step with the flow.</span>}
              </div>
            </section>
          )}
          {view === 'flow' && (
            <ProblemsContext.Provider value={problems}>
              <section className="card stack" aria-label="Settings">
                <div className="grid-2">
                  <Field label="Sequence name">
                    <input required value={seq.name} onChange={(e) => setSeq({ ...seq, name: e.target.value })} />
                  </Field>
                  <Field label="Status">
                    <select value={seq.status} onChange={(e) => setSeq({ ...seq, status: e.target.value as SequenceDraft['status'] })}>
                      <option value="active">Active (sends)</option>
                      <option value="draft">Draft</option>
                      <option value="paused">Paused</option>
                    </select>
                  </Field>
                  <Field label="Send window" hint="In the lead's local time, e.g. Mon-Fri 09:00-17:00; 'any' sends at any hour.">
                    <input required value={seq.window} onChange={(e) => setSeq({ ...seq, window: e.target.value })} />
                  </Field>
                  <Field label="Random delay per send (minutes)" hint="Spreads sends so they do not look scheduled; 0 sends on time.">
                    <input type="number" min={0} max={240} value={seq.jitterMinutes} onChange={(e) => setSeq({ ...seq, jitterMinutes: Number(e.target.value) })} />
                  </Field>
                  <fieldset>
                    <legend>Calendar and tracking</legend>
                    <label className="check">
                      <input type="checkbox" checked={seq.holidays} onChange={(e) => setSeq({ ...seq, holidays: e.target.checked })} /> Skip the lead's public holidays
                    </label>
                    <label className="check">
                      <input type="checkbox" checked={seq.trackOpens} onChange={(e) => setSeq({ ...seq, trackOpens: e.target.checked })} /> Track opens (a pixel)
                    </label>
                    <label className="check">
                      <input type="checkbox" checked={seq.trackClicks} onChange={(e) => setSeq({ ...seq, trackClicks: e.target.checked })} /> Track clicks (redirected links)
                    </label>
                  </fieldset>
                  <StopRulesFields rules={seq.stopRules} onChange={(stopRules) => setSeq({ ...seq, stopRules })} sequences={targets} />
                  <fieldset>
                    <legend>Sends from</legend>
                    {(mailboxes.data?.mailboxes ?? []).map((m) => (
                      <label key={m.id} className="check">
                        <input
                          type="checkbox"
                          checked={seq.mailboxes.includes(m.email)}
                          onChange={(e) => setSeq({ ...seq, mailboxes: e.target.checked ? [...seq.mailboxes, m.email] : seq.mailboxes.filter((x) => x !== m.email) })}
                        />{' '}
                        {m.email}
                      </label>
                    ))}
                    {mailboxes.data?.mailboxes.length === 0 && <p className="muted small">Add a mailbox first.</p>}
                  </fieldset>
                </div>
              </section>
              <p className="flow-start">Enrolled</p>
              <ol className="steps flow" aria-label="Steps">
                {seq.steps.map((s, i) => (
                  <li key={i} aria-label={`Step ${i + 1}`}>
                    <Connector name={`step ${i + 1}`} delay={s.delay} first={i === 0} onDelay={(delay) => setStep(i, { delay })} onInsert={(k) => insertStep(i, k)} />
                    {isBranch(s) ? (
                      <BranchCard
                        name={`Step ${i + 1}`}
                        step={s}
                        before={seq.steps.slice(0, i)}
                        onChange={(b) => setSeq({ ...seq, steps: seq.steps.map((x, j) => (j === i ? b : x)) })}
                        onRemove={() => setSeq({ ...seq, steps: seq.steps.filter((_, j) => j !== i) })}
                        used={used}
                        sequences={targets}
                        path={`steps.${i}`}
                        owners={owners}
                      />
                    ) : (
                      <StepCard workspaceId={workspaceId}
                        name={`Step ${i + 1}`}
                        path={`steps.${i}`}
                        fixedBy={owners.get(s.key)}
                        step={s}
                        first={i === 0}
                        onChange={(patch) => setStep(i, patch)}
                        onRemove={seq.steps.length > 1 ? () => setSeq({ ...seq, steps: seq.steps.filter((_, j) => j !== i) }) : undefined}
                        onPreview={(variant) => previewAt(i, variant)}
                        previewing={previewStep === i && previewVariant < 0}
                      />
                    )}
                  </li>
                ))}
              </ol>
              <p className="flow-end">End of sequence</p>
              <SequenceExperiments experiments={seq.experiments} steps={seq.steps} window={seq.window} onChange={(experiments) => setSeq({ ...seq, experiments })} />
            </ProblemsContext.Provider>
          )}
          <div className="row">
            {view === 'flow' && (
              <>
                <button type="button" className="btn" onClick={() => insertStep(seq.steps.length, 'email')}>
                  Add step
                </button>
                <button type="button" className="btn" onClick={() => insertStep(seq.steps.length, 'branch')}>
                  Add a branch
                </button>
              </>
            )}
            <button type="button" className="btn btn-primary" disabled={busy} onClick={() => save()}>
              {busy ? 'Saving…' : 'Save sequence'}
            </button>
          </div>
          <ErrorNote error={error} />
          {unsendable && (
            <div className="note note-warn stack" role="alertdialog" aria-label="Save anyway?">
              <p>{unsendable}</p>
              <div className="row">
                <button type="button" className="btn" onClick={() => setUnsendable(undefined)}>
                  Go back
                </button>
                <button type="button" className="btn btn-primary" disabled={busy} onClick={() => save(true)}>
                  Save anyway
                </button>
              </div>
            </div>
          )}
          {warnings.length > 0 && (
            <ul className="note note-warn" aria-label="Warnings">
              {warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
          {saved && (
            <p className="note note-ok" role="status">
              {saved}
            </p>
          )}
          {seq.id && <ContentCheck workspaceId={workspaceId} sequenceId={seq.id} steps={plainSteps} />}
          {seq.id && <Launch workspaceId={workspaceId} sequenceId={seq.id} active={seq.status === 'active'} onEnrolled={() => setEnrolledAt((n) => n + 1)} />}
          {seq.id && <ExperimentsPanel workspaceId={workspaceId} sequenceId={seq.id} />}
          {seq.id && <SequenceEnrollments workspaceId={workspaceId} sequenceId={seq.id} refresh={enrolledAt} />}
        </div>
        <Preview workspaceId={workspaceId} step={previewDraft(previewedStep, previewVariant)} what={previewWhat(previewedStep, previewStep, previewVariant)} leads={leads.data?.leads ?? []} pool={pool} />
      </div>
    </>
  );
}

/** What the person reads when a template renders for none of the leads: which step, and why (the server's reason). */
function unsendableText(details: Record<string, unknown>): string {
  const failures = Array.isArray(details.failures) ? (details.failures as Array<{ step: string; variant: string; reason: string }>) : [];
  const n = typeof details.leadsChecked === 'number' ? details.leadsChecked : 0;
  const which = failures.map((f) => `step ${f.step}${f.variant !== 'a' ? `, variant ${f.variant.toUpperCase()}` : ''}: ${f.reason}`).join('; ');
  return `This email cannot be sent to any of the ${n} leads checked (${which}). Every send of that step would be blocked. Save anyway?`;
}

/** A step as PUT takes it: an empty title or note is none (in a branch's arms too). */
function cleanStep(s: StepDraft): StepDraft {
  const { title, notes, ...rest } = s;
  return { ...rest, ...(title?.trim() ? { title } : {}), ...(notes?.trim() ? { notes } : {}) };
}

function cleanFlowStep(s: FlowStep): FlowStep {
  return isBranch(s) ? { ...s, branches: s.branches.map((a) => ({ ...a, steps: a.steps.map(cleanStep) })) } : cleanStep(s);
}

/** The sequence's stop rules; 'Default' leaves a rule unset (the server's default applies). */
type DraftRules = SequenceDraft['stopRules'];
function StopRulesFields({ rules, onChange, sequences }: { rules: DraftRules; onChange: (r: DraftRules) => void; sequences: Array<{ key: string; name: string }> }) {
  const set = <K extends keyof DraftRules>(k: K, v: DraftRules[K] | undefined) => {
    const next = { ...rules };
    if (v === undefined) delete next[k];
    else next[k] = v;
    onChange(next);
  };
  const num = (v: string) => (v.trim() === '' ? undefined : Number(v));
  return (
    <fieldset className="stack">
      <legend>Stop rules</legend>
      <Field label="On an out-of-office reply">
        <select value={rules.onOutOfOffice ?? ''} onChange={(e) => set('onOutOfOffice', (e.target.value || undefined) as StopRules['onOutOfOffice'])}>
          <option value="">Default (pause until the return date)</option>
          <option value="pause">Pause until the return date</option>
          <option value="ignore">Ignore</option>
        </select>
      </Field>
      <Field label="Out-of-office pause without a return date (days)" hint="Empty: 7.">
        <input type="number" min={1} max={90} value={rules.oooDefaultPauseDays ?? ''} onChange={(e) => set('oooDefaultPauseDays', num(e.target.value))} />
      </Field>
      <Field label="On a booked meeting">
        <select value={rules.onMeetingBooked ?? ''} onChange={(e) => set('onMeetingBooked', (e.target.value || undefined) as StopRules['onMeetingBooked'])}>
          <option value="">Default (finish the enrollment)</option>
          <option value="finish">Finish the enrollment</option>
          <option value="continue">Continue</option>
        </select>
      </Field>
      <Field label="Soft bounces before stopping" hint="Empty: 3.">
        <input type="number" min={1} max={20} value={rules.maxSoftBounces ?? ''} onChange={(e) => set('maxSoftBounces', num(e.target.value))} />
      </Field>
      <label className="check">
        <input type="checkbox" checked={rules.stopCompanyOnReply ?? false} onChange={(e) => set('stopCompanyOnReply', e.target.checked || undefined)} /> A reply stops the other leads of the same company
      </label>
      <ReplyRulesFields rules={rules.onReply ?? {}} onChange={(r) => set('onReply', Object.keys(r).length ? r : undefined)} sequences={sequences} />
    </fieldset>
  );
}

const intentNames: Record<(typeof replyRuleIntents)[number], string> = {
  interested: 'Interested',
  not_interested: 'Not interested',
  wrong_person: 'Wrong person',
  referral: 'Referral',
  question: 'Question',
  neutral: 'Neutral',
};

/** Besides stopping, what a reply of each intent does: nothing more, a task for the owner, or a move to another sequence. */
function ReplyRulesFields({ rules, onChange, sequences }: { rules: ReplyRules; onChange: (r: ReplyRules) => void; sequences: Array<{ key: string; name: string }> }) {
  const set = (intent: keyof ReplyRules, v: 'notify' | MoveTo | undefined) => {
    const next = { ...rules };
    if (v === undefined) delete next[intent];
    else next[intent] = v;
    onChange(next);
  };
  return (
    <fieldset className="stack">
      <legend>On a reply, by its intent</legend>
      {replyRuleIntents.map((intent) => {
        const r = rules[intent];
        const label = `On a reply: ${intentNames[intent]}`;
        return (
          <div key={intent} className="stack">
            <Field label={label}>
              <select
                value={r === undefined ? '' : r === 'notify' ? 'notify' : 'move'}
                onChange={(e) => set(intent, e.target.value === '' ? undefined : e.target.value === 'notify' ? 'notify' : { moveTo: sequences[0]?.key ?? '', after: '0 days' })}
              >
                <option value="">Stop only</option>
                <option value="notify">Stop and notify the owner</option>
                <option value="move">Move to a sequence after…</option>
              </select>
            </Field>
            {typeof r === 'object' && <MoveFields name={label} value={r} onChange={(m) => set(intent, m)} sequences={sequences} />}
          </div>
        );
      })}
    </fieldset>
  );
}

/** The draft the preview renders: the step itself, or one of its variants in its place (an empty variant subject keeps the step's). */
function previewDraft(step: StepDraft | undefined, variant: number): StepDraft | undefined {
  const v = step?.variants[variant];
  return step && v ? { ...step, subject: v.subject || step.subject, body: v.body, html: v.html } : step;
}

function previewWhat(step: StepDraft | undefined, i: number, variant: number): string {
  if (!step) return '';
  const v = step.variants[variant];
  return `Step ${i + 1}${step.variants.length ? `, variant ${v ? v.key.toUpperCase() : 'A'}` : ''}`;
}

function Preview({ workspaceId, step, what, leads, pool }: { workspaceId: string; step: StepDraft | undefined; what: string; leads: Lead[]; pool: Mailbox[] }) {
  const [leadId, setLeadId] = useState('');
  const [mailboxId, setMailboxId] = useState('');
  // The first of the pool by address, as the server defaults; a pick that left the pool falls back to it.
  const sorted = [...pool].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  const from = sorted.find((m) => m.id === mailboxId)?.id ?? sorted[0]?.id ?? '';
  const [out, setOut] = useState<ApiResponse<'POST /api/workspaces/:workspaceId/sequences/preview'>>();
  const [error, setError] = useState<string>();
  const lead = leadId || leads[0]?.id || '';
  useEffect(() => {
    if (!step || step.type !== 'email' || !lead) return;
    const t = setTimeout(() => {
      call('POST /api/workspaces/:workspaceId/sequences/preview', ws(workspaceId, 'sequences/preview'), {
        leadId: lead,
        subject: step.subject,
        body: step.body,
        mailboxes: pool.map((m) => m.email),
        ...(from ? { mailboxId: from } : {}),
        signature: step.signature !== false,
      })
        .then((r) => (setOut(r), setError(undefined)))
        .catch((e: unknown) => setError(errorMessage(e)));
    }, 250);
    return () => clearTimeout(t);
    // The text, not the object: a variant's draft is a new object on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [workspaceId, step?.type, step?.subject, step?.body, step?.signature, lead, from, pool.map((m) => m.email).join(',')]);
  return (
    <aside className="card preview stack" aria-label="Live preview">
      <h2>Preview</h2>
      {what && <p className="muted small" style={{ margin: 0 }}>{what}</p>}
      {leads.length === 0 ? (
        <p className="muted">Import leads to preview against a real one.</p>
      ) : (
        <Field label="As sent to">
          <select value={lead} onChange={(e) => setLeadId(e.target.value)}>
            {leads.map((l) => (
              <option key={l.id} value={l.id}>
                {l.email}
              </option>
            ))}
          </select>
        </Field>
      )}
      {sorted.length > 0 && (
        <Field label="Sent from">
          <select value={from} onChange={(e) => setMailboxId(e.target.value)}>
            {sorted.map((m) => (
              <option key={m.id} value={m.id}>
                {mailboxName(m)}
                {step?.signature === false || m.signature ? '' : ' (no signature)'}
              </option>
            ))}
          </select>
        </Field>
      )}
      {step?.type === 'email' && step.signature === false && <p className="muted small">This step is sent without a signature.</p>}
      <ErrorNote error={error} />
      {out && step?.type === 'email' && (
        <div className="mail" aria-live="polite">
          <div className="mail-subject">{out.subject ?? <span className="muted">(reply in thread)</span>}</div>
          <pre className="mail-body">{out.text}</pre>
          {out.problems.length > 0 && (
            <ul className="text-bad small">
              {out.problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </aside>
  );
}

const levelTone = { ok: 'ok', warn: 'warn', bad: 'bad' } as const;

/**
 * "Check content", before launch: the saved step rendered for a sample lead, scored by the local
 * spam filter (rspamd) with its rules in plain words, and Cadenza's own findings.
 */
function ContentCheck({ workspaceId, sequenceId, steps }: { workspaceId: string; sequenceId: string; steps: StepDraft[] }) {
  const emailSteps = steps.filter((s) => s.type === 'email');
  const [stepKey, setStepKey] = useState(emailSteps[0]?.key ?? '');
  const [result, setResult] = useState<ContentCheckResult>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  if (emailSteps.length === 0) return null;
  const check = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setResult(await call('POST /api/workspaces/:workspaceId/sequences/:sequenceId/steps/:stepKey/content-check', ws(workspaceId, `sequences/${sequenceId}/steps/${encodeURIComponent(stepKey)}/content-check`), {}));
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const score = result?.score;
  return (
    <section className="card stack" aria-label="Check content">
      <h2>Check content</h2>
      <p className="muted">The saved step, rendered for a sample lead, judged by the spam filter on this server and by Cadenza's checks. Save first to check your latest edits.</p>
      <div className="row">
        <Field label="Step">
          <select value={stepKey} onChange={(e) => setStepKey(e.target.value)}>
            {emailSteps.map((s) => (
              <option key={s.key} value={s.key}>
                {s.key}
              </option>
            ))}
          </select>
        </Field>
        <button type="button" className="btn" disabled={busy || !stepKey} onClick={check}>
          {busy ? 'Checking…' : 'Check content'}
        </button>
      </div>
      <ErrorNote error={error} />
      {result && !result.rendered && <p className="note note-warn">This step does not render for {result.lead?.email ?? 'the sample lead'}: {result.problem}</p>}
      {result?.rendered && (
        <div role="status" className="stack">
          {score?.status === 'scored' ? (
            <p>
              Spam score <strong>{score.score}</strong> of {score.threshold} (filed as spam from {score.threshold}):{' '}
              <Badge tone={score.spam ? 'bad' : 'ok'}>{score.spam ? 'likely Junk' : 'likely inbox'}</Badge>
            </p>
          ) : (
            <p className="muted">No spam score: {score?.reason ?? 'no scorer'}.</p>
          )}
          {score?.status === 'scored' && (score.hits?.length ?? 0) > 0 && (
            <ul className="small" aria-label="Spam filter rules">
              {score.hits!.map((h) => (
                <li key={h.symbol}>
                  <strong>{h.score > 0 ? `+${h.score}` : h.score}</strong> {h.explanation} <span className="muted">({h.symbol})</span>
                </li>
              ))}
            </ul>
          )}
          <ul className="small" aria-label="Cadenza's checks">
            {result.findings.map((f, i) => (
              <li key={`${f.code}-${i}`}>
                <Badge tone={levelTone[f.level]}>{f.level}</Badge> {f.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

function Launch({ workspaceId, sequenceId, active, onEnrolled }: { workspaceId: string; sequenceId: string; active: boolean; onEnrolled: () => void }) {
  const [result, setResult] = useState<EnrollResult>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const launch = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setResult(await call('POST /api/workspaces/:workspaceId/sequences/:sequenceId/enroll', ws(workspaceId, `sequences/${sequenceId}/enroll`), { all: true }));
      onEnrolled();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card stack" aria-label="Launch">
      <h2>Launch</h2>
      <p className="muted">Enroll every lead of the workspace who is not in this sequence yet. Suppressed leads are refused and listed.</p>
      <div>
        <button type="button" className="btn btn-primary" disabled={busy || !active} onClick={launch}>
          {busy ? 'Enrolling…' : 'Enroll all leads'}
        </button>
        {!active && <span className="muted small"> Set the status to active and save to launch.</span>}
      </div>
      <ErrorNote error={error} />
      {result && <EnrollOutcome result={result} />}
    </section>
  );
}

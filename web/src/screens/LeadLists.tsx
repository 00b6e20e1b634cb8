import { useState } from 'react';
import { api, apiText, call, errorMessage, ws } from '../api.ts';
import type { ApiBody, ApiResponse, EnrollResult, SequenceSummary } from '../types.ts';
import { useConfirm } from '../ui/dialog.tsx';
import { saveFile } from '../ui/download.ts';
import { EnrollOutcome } from '../ui/EnrollOutcome.tsx';
import { ErrorNote, Field, SubmitButton } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { useSubmit } from '../ui/use-submit.ts';
import { activityWords, fieldWords, NO_CONDITIONS, SegmentConditions, type Conditions } from './SegmentConditions.tsx';

export type LeadList = ApiResponse<'GET /api/workspaces/:workspaceId/lead-lists'>['lists'][number];
export type SegmentFilter = NonNullable<LeadList['filter']>;
type BulkBody = ApiBody<'POST /api/workspaces/:workspaceId/leads/bulk'>;
export type LeadTarget = BulkBody['target'];
type Action = BulkBody['action'];

/** The leads screen's filters that a segment can keep, as their menus hold them ('' for any). */
export interface FilterMenus {
  country: string;
  tag: string;
  sequenceId: string;
  state: string;
  enrolled: string;
  replied: string;
  verdict: string;
}

/** The menus' filter as a segment's (only what is set). */
export function segmentOf(f: FilterMenus, search: string): SegmentFilter {
  const out: Record<string, unknown> = {};
  if (search.trim()) out.search = search.trim();
  if (f.country) out.country = f.country.toUpperCase();
  if (f.tag) out.tag = f.tag;
  if (f.sequenceId) out.sequenceId = f.sequenceId;
  if (f.state) out.state = f.state;
  if (f.enrolled) out.enrolled = f.enrolled === 'true';
  if (f.replied) out.replied = f.replied === 'true';
  if (f.verdict) out.verdict = f.verdict;
  return out as SegmentFilter;
}

/** A segment's filter in words: "country DE, tag fair, not enrolled". */
export function filterWords(f: SegmentFilter, sequences: SequenceSummary[], lists: LeadList[]): string {
  const seq = (id: string) => sequences.find((s) => s.id === id)?.name ?? 'a sequence';
  const parts: string[] = [];
  if (f.search) parts.push(`“${f.search}”`);
  if (f.country) parts.push(`country ${f.country}`);
  if (f.tag) parts.push(`tag ${f.tag}`);
  if (f.listId) parts.push(`in ${lists.find((l) => l.id === f.listId)?.name ?? 'a list'}`);
  if (f.state) parts.push(f.state === 'none' ? `not enrolled${f.sequenceId ? ` in ${seq(f.sequenceId)}` : ''}` : `${f.state}${f.sequenceId ? ` in ${seq(f.sequenceId)}` : ''}`);
  else if (f.enrolled !== undefined) parts.push(`${f.enrolled ? 'enrolled' : 'not enrolled'}${f.sequenceId ? ` in ${seq(f.sequenceId)}` : ''}`);
  else if (f.sequenceId) parts.push(`in ${seq(f.sequenceId)}`);
  if (f.replied !== undefined) parts.push(f.replied ? 'replied' : 'not replied');
  if (f.verdict) parts.push(`address ${f.verdict === 'review' ? 'to review' : f.verdict === 'unchecked' ? 'not checked' : f.verdict}`);
  for (const c of f.fields ?? []) parts.push(fieldWords(c));
  for (const c of f.activity ?? []) parts.push(activityWords(c));
  return parts.join(', ') || 'every lead';
}

/** The table's filters with the editor's conditions (each kind only when there is one: the server takes no empty list). */
function withConditions(f: SegmentFilter, c: Conditions): SegmentFilter {
  return { ...f, ...(c.fields.length ? { fields: c.fields } : {}), ...(c.activity.length ? { activity: c.activity } : {}) };
}

/** New static list (empty), or a segment saving the screen's current filters and the conditions added here. */
export function NewList({ workspaceId, filter, sequences, lists, onCreated }: { workspaceId: string; filter: SegmentFilter; sequences: SequenceSummary[]; lists: LeadList[]; onCreated: (l: LeadList) => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<'static' | 'segment'>('segment');
  const [conditions, setConditions] = useState<Conditions>(NO_CONDITIONS);
  const keys = useLoad(() => call('GET /api/workspaces/:workspaceId/lead-fields', ws(workspaceId, 'lead-fields')), [workspaceId]);
  const { busy, error, submit } = useSubmit(async () => {
    const body = kind === 'static' ? { name, kind } : { name, kind, filter: withConditions(filter, conditions) };
    onCreated(await call('POST /api/workspaces/:workspaceId/lead-lists', ws(workspaceId, 'lead-lists'), body));
  });
  return (
    <form className="card stack" aria-labelledby="new-list-title" onSubmit={(e) => void submit(e)}>
      <h2 id="new-list-title">New list or segment</h2>
      <fieldset>
        <legend>Kind</legend>
        <label className="check">
          <input type="radio" name="list-kind" checked={kind === 'segment'} onChange={() => setKind('segment')} />
          Segment: the leads matching the filters now ({filterWords(filter, sequences, lists)}), always current
        </label>
        <label className="check">
          <input type="radio" name="list-kind" checked={kind === 'static'} onChange={() => setKind('static')} />
          Static list: empty; add leads to it from the table
        </label>
      </fieldset>
      {kind === 'segment' && <SegmentConditions value={conditions} onChange={setConditions} customKeys={(keys.data?.custom ?? []).map((k) => k.key)} />}
      <Field label="List name">
        <input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <ErrorNote error={error} />
      <div>
        <SubmitButton busy={busy} busyText="Saving…">
          {kind === 'segment' ? 'Save segment' : 'Create list'}
        </SubmitButton>
      </div>
    </form>
  );
}

type Kind = Action['kind'] | 'export';

const ACTIONS: Array<[Kind, string]> = [
  ['tag', 'Add a tag'],
  ['untag', 'Remove a tag'],
  ['add_to_list', 'Add to a list'],
  ['remove_from_list', 'Remove from a list'],
  ['enroll', 'Enroll in a sequence'],
  ['stop', 'Stop their enrollments'],
  ['export', 'Export as CSV'],
  ['delete', 'Delete'],
];

/**
 * One action on the leads picked in the table, or on every lead of the list or segment shown: the
 * server resolves a list or segment itself, so "all" is every match, not only the rows loaded.
 */
export function BulkActions({
  workspaceId,
  target,
  what,
  lists,
  sequences,
  admin,
  onDone,
}: {
  workspaceId: string;
  target: LeadTarget;
  /** The leads in words: "3 selected leads", "every lead in Fair 2026". */
  what: string;
  lists: LeadList[];
  sequences: SequenceSummary[];
  admin: boolean;
  onDone: () => void;
}) {
  const [kind, setKind] = useState<Kind>('tag');
  const [tag, setTag] = useState('');
  const [listId, setListId] = useState('');
  const [sequenceId, setSequenceId] = useState('');
  const { ask, dialog } = useConfirm();
  const [outcome, setOutcome] = useState<{ text: string; enroll?: EnrollResult }>();
  const staticLists = lists.filter((l) => l.kind === 'static');
  const { busy, error, setError, submit } = useSubmit(async () => {
    setOutcome(undefined);
    if (kind === 'export') {
      const text = await apiText(ws(workspaceId, 'leads/export'), { target });
      saveFile(new Blob([text], { type: 'text/csv' }), 'leads.csv');
      setOutcome({ text: `Exported ${Math.max(0, text.trim().split('\r\n').length - 1)} leads to leads.csv.` });
      return;
    }
    // Deleting asks first, in the page (as every deletion: docs/web.md "Asking first").
    if (kind === 'delete' && !(await ask({ title: `Delete ${what}?`, body: 'Their enrollments and tasks go with them. This cannot be undone.', action: 'Delete leads' }))) return;
    const action: Action =
      kind === 'tag' || kind === 'untag'
        ? { kind, tag }
        : kind === 'add_to_list' || kind === 'remove_from_list'
          ? { kind, listId }
          : kind === 'enroll'
            ? { kind, sequenceId }
            : { kind };
    const r = await call('POST /api/workspaces/:workspaceId/leads/bulk', ws(workspaceId, 'leads/bulk'), { target, action });
    const n = `${r.changed} of ${r.leads}`;
    const text =
      kind === 'tag'
        ? `Tagged ${n} leads “${tag}” (the others had it already).`
        : kind === 'untag'
          ? `Removed “${tag}” from ${n} leads.`
          : kind === 'add_to_list'
            ? `Added ${n} leads to ${lists.find((l) => l.id === listId)?.name} (the others were in it).`
            : kind === 'remove_from_list'
              ? `Removed ${n} leads from ${lists.find((l) => l.id === listId)?.name}.`
              : kind === 'stop'
                ? `${r.changed} running enrollment${r.changed === 1 ? '' : 's'} of ${r.leads} leads stopped${r.tasksCancelled ? `; ${r.tasksCancelled} open task${r.tasksCancelled === 1 ? '' : 's'} closed` : ''}.`
                : kind === 'delete'
                  ? `Deleted ${r.changed} leads.`
                  : `Enrolled ${n} leads in ${sequences.find((s) => s.id === sequenceId)?.name}.`;
    setOutcome({ text, ...(r.enroll ? { enroll: r.enroll } : {}) });
    onDone();
  });
  const needs = kind === 'tag' || kind === 'untag' ? !tag.trim() : kind === 'add_to_list' || kind === 'remove_from_list' ? !listId : kind === 'enroll' ? !sequenceId : false;
  return (
    <>
      <form className="card stack bulk" aria-labelledby="bulk-title" onSubmit={(e) => void submit(e)}>
        <h2 id="bulk-title">Act on {what}</h2>
        <div className="row bulk-fields">
          <Field label="Action">
            <select
              value={kind}
              onChange={(e) => {
                setKind(e.target.value as Kind);
                setError(undefined);
              }}
            >
              {ACTIONS.filter(([k]) => k !== 'delete' || admin).map(([k, label]) => (
                <option key={k} value={k}>
                  {label}
                </option>
              ))}
            </select>
          </Field>
          {(kind === 'tag' || kind === 'untag') && (
            <Field label="Tag">
              <input value={tag} maxLength={60} onChange={(e) => setTag(e.target.value)} />
            </Field>
          )}
          {(kind === 'add_to_list' || kind === 'remove_from_list') && (
            <Field label="List" hint={staticLists.length ? undefined : 'Create a static list first'}>
              <select value={listId} onChange={(e) => setListId(e.target.value)}>
                <option value="">Choose a list</option>
                {staticLists.map((l) => (
                  <option key={l.id} value={l.id}>
                    {l.name}
                  </option>
                ))}
              </select>
            </Field>
          )}
          {kind === 'enroll' && (
            <Field label="Sequence">
              <select value={sequenceId} onChange={(e) => setSequenceId(e.target.value)}>
                <option value="">Choose a sequence</option>
                {sequences
                  .filter((s) => s.status !== 'archived')
                  .map((s) => (
                    <option key={s.id} value={s.id}>
                      {s.name}
                      {s.status !== 'active' ? ` (${s.status})` : ''}
                    </option>
                  ))}
              </select>
            </Field>
          )}
        </div>
        <ErrorNote error={error} />
        <div className="row">
          <SubmitButton busy={busy} busyText="Working…" disabled={needs}>
            {kind === 'delete' ? 'Delete…' : 'Apply'}
          </SubmitButton>
        </div>
        {outcome && (
          <p className="note note-ok" role="status">
            {outcome.text}
          </p>
        )}
        {outcome?.enroll && <EnrollOutcome result={outcome.enroll} />}
      </form>
      {dialog}
    </>
  );
}

/** Deletes a list or segment (its leads stay). */
export async function deleteList(workspaceId: string, id: string): Promise<string | undefined> {
  try {
    await api('DELETE', ws(workspaceId, `lead-lists/${id}`));
    return undefined;
  } catch (e) {
    return errorMessage(e);
  }
}

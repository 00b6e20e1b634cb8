import { useEffect, useState } from 'react';
import { MAX_RETENTION_DAYS, RETENTION_KINDS, type RetentionKind } from '../../../src/privacy/retention.ts';
import { ApiError, call, errorMessage, ws } from '../api.ts';
import type { Retention as RetentionSettings } from '../types.ts';
import { DaysOrKeep, daysOrKeep, type DaysOrKeepValue } from '../ui/DaysOrKeep.tsx';
import { ErrorNote, SettingsFormEnd, SubmitButton, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { useSubmit } from '../ui/use-submit.ts';
import { purgeCounts } from './privacy-words.ts';

/**
 * Each kind in a person's words, in the order the data ages (text before whole messages). The
 * floors and the ceiling come from the server's own rules (src/privacy/retention.ts); `suggested`
 * fills the days when "Keep until deleted" is unticked.
 */
const KINDS: Array<{ key: RetentionKind; legend: string; hint: string; suggested: number }> = [
  {
    key: 'messageBodiesDays',
    legend: 'Message text',
    hint: "The text of replies, and the raw mail of quarantined messages; the message itself (sender, subject, date) stays. No longer than whole messages.",
    suggested: 90,
  },
  {
    key: 'messagesDays',
    legend: 'Whole messages',
    hint: 'Every email sent and received (addresses, subject, date), quarantined mail, and replies sent from the inbox. A reply to a deleted message is no longer matched to its sequence.',
    suggested: 365,
  },
  { key: 'eventsDays', legend: 'Events', hint: "The enrollments' journal, opens, clicks and unsubscribes, and the webhook deliveries made.", suggested: 365 },
  { key: 'importRejectsDays', legend: 'Rejected import rows', hint: "The raw rows an import refused, kept for the import's rejects report.", suggested: 30 },
  {
    key: 'unmatchedCallsDays',
    legend: 'Calls with no lead',
    hint: "Incoming calls from numbers no lead has: the number, times and notes, with the call's recording and transcript. A lead's calls stay as long as the lead.",
    suggested: 90,
  },
];
const LEGEND = Object.fromEntries(KINDS.map((k) => [k.key, k.legend])) as Record<RetentionKind, string>;

type Form = Record<RetentionKind, DaysOrKeepValue>;

function formOf(r: RetentionSettings): Form {
  return Object.fromEntries(KINDS.map((k) => [k.key, daysOrKeep(r[k.key], k.suggested)])) as Form;
}

/**
 * A refused change with each field named as on the form: the server says "messageBodiesDays cannot
 * be longer than messagesDays (365)…", a person reads "Message text: cannot be longer than whole
 * messages (365)…".
 */
function refusal(e: unknown): string {
  const fields = e instanceof ApiError ? (e.details.fields as Record<string, string> | undefined) : undefined;
  if (!fields) return errorMessage(e);
  const words = (s: string) => s.replace(new RegExp(`\\b(${KINDS.map((k) => k.key).join('|')})\\b`, 'g'), (k) => LEGEND[k as RetentionKind].toLowerCase());
  return Object.entries(fields)
    .map(([k, problem]) => `${LEGEND[k as RetentionKind] ?? k}: ${words(problem)}`)
    .join('\n');
}

/** How long the workspace keeps personal data (docs/privacy.md), and what the nightly purge last removed of it. */
export function Retention({ workspaceId, admin }: { workspaceId: string; admin: boolean }) {
  const url = ws(workspaceId, 'privacy/retention');
  const r = useLoad(() => call('GET /api/workspaces/:workspaceId/privacy/retention', url), [workspaceId]);
  const [f, setF] = useState<Form>();
  const [saved, setSaved] = useState<string>();
  useEffect(() => {
    if (r.data) setF(formOf(r.data));
  }, [r.data]);
  const save = useSubmit(async () => {
    setSaved(undefined);
    const body = Object.fromEntries(KINDS.map((k) => [k.key, f![k.key].keep ? null : Number(f![k.key].days)])) as Record<RetentionKind, number | null>;
    try {
      const next = await call('PATCH /api/workspaces/:workspaceId/privacy/retention', url, body);
      setF(formOf(next));
      setSaved('Retention saved. The nightly purge applies it.');
    } catch (e) {
      throw new Error(refusal(e));
    }
  });
  return (
    <form className="stack" onSubmit={save.submit} aria-labelledby="privacy-retention">
      <h3 id="privacy-retention">Retention</h3>
      <p className="muted small" style={{ margin: 0 }}>
        Once a day, from 02:00 UTC, Cadenza deletes what is older than these periods. Leads, their enrollments and the suppression list are kept until deleted or erased; the audit log
        has its own retention, under Workspace.
      </p>
      <ErrorNote error={r.error} />
      {r.data && <LastPurge last={r.data.lastPurge} />}
      {f && (
        <fieldset disabled={!admin} className="plain-fieldset retention-grid">
          {KINDS.map((k) => (
            <DaysOrKeep key={k.key} legend={k.legend} hint={k.hint} min={RETENTION_KINDS[k.key].min} max={MAX_RETENTION_DAYS} value={f[k.key]} onChange={(v) => setF({ ...f, [k.key]: v })} />
          ))}
        </fieldset>
      )}
      <SettingsFormEnd error={save.error} saved={saved} canEdit={admin}>
        <SubmitButton busy={save.busy} busyText="Saving…" disabled={!f}>
          Save retention
        </SubmitButton>
      </SettingsFormEnd>
    </form>
  );
}

function LastPurge({ last }: { last: RetentionSettings['lastPurge'] }) {
  if (!last) return <p className="small">The nightly purge has not run yet.</p>;
  const removed = last.counts ? purgeCounts(last.counts) : undefined;
  return (
    <p className="small">
      Last purge: {when(last.finishedAt)}.{' '}
      {removed === undefined ? 'What it removed from this workspace was not recorded.' : removed ? `It removed ${removed}.` : 'Nothing in this workspace was past its retention.'}
    </p>
  );
}

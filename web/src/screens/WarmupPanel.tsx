import { useEffect, useState } from 'react';
import { call, errorMessage } from '../api.ts';
import type { WarmupMembership, WarmupPlacement } from '../api-types.gen.ts';
import { DailyChart } from '../ui/charts.tsx';
import { ErrorNote } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';

/**
 * A mailbox's part in the warmup network (src/api/routes/warmup.ts): the opt-in toggle and its
 * daily target, the placement over 7 and 30 days (the share of its warmup mail receivers found in
 * the inbox), the cap factor placement set and why, and the last 30 days as a chart.
 */
export function WarmupPanel({ url, email, canEdit }: { url: string; email: string; canEdit: boolean }) {
  const membership = useLoad(() => call('GET /api/workspaces/:workspaceId/mailboxes/:mailboxId/warmup', url), [url]);
  const placement = useLoad(() => call('GET /api/workspaces/:workspaceId/mailboxes/:mailboxId/warmup/placement', `${url}/placement`), [url]);
  const [error, setError] = useState<string>();
  const [target, setTarget] = useState('');
  // The toggle shows the choice at once, disabled while the server has not answered, until the
  // membership is read again; on an error it falls back to what the server holds.
  const [pending, setPending] = useState<boolean>();
  const [saving, setSaving] = useState(false);
  const m: WarmupMembership | undefined = membership.data;
  useEffect(() => setPending(undefined), [m]);
  const p: WarmupPlacement | undefined = placement.data;
  const save = async (enabled: boolean) => {
    setError(undefined);
    setPending(enabled);
    setSaving(true);
    try {
      const t = Number(target);
      await call('PUT /api/workspaces/:workspaceId/mailboxes/:mailboxId/warmup', url, { enabled, ...(target.trim() !== '' && Number.isInteger(t) ? { target: t } : {}) });
      membership.reload();
      placement.reload();
    } catch (e) {
      setError(errorMessage(e));
      setPending(undefined);
    } finally {
      setSaving(false);
    }
  };
  const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${Math.round(x * 100)}%`);
  return (
    <section className="panel" aria-label={`Warmup of ${email}`}>
      <h2>Warmup of {email}</h2>
      <ErrorNote error={membership.error ?? placement.error ?? error} />
      {m && (
        <div className="row">
          <label>
            <input type="checkbox" checked={pending ?? m.enabled} disabled={!canEdit || saving} onChange={(e) => save(e.target.checked)} /> Take part in the warmup network
          </label>
          <label>
            Daily target{' '}
            <input type="number" min={1} max={200} placeholder={String(m.target ?? 30)} value={target} disabled={!canEdit} onChange={(e) => setTarget(e.target.value)} style={{ width: 80 }} />
          </label>
          {m.enabled && canEdit && (
            <button type="button" className="btn btn-quiet" onClick={() => save(true)}>
              Save target
            </button>
          )}
        </div>
      )}
      {p && (
        <>
          <p>
            In the inbox: <strong>{pct(p.share7)}</strong> over 7 days ({p.receipts7} read), <strong>{pct(p.share30)}</strong> over 30 days ({p.receipts30} read).
            {p.capFactor < 1 && <span className="text-warn"> Daily cap × {p.capFactor}: {p.capReason}</span>}
          </p>
          <DailyChart
            days={p.days}
            csvName="warmup-placement"
            series={[
              { key: 'inbox', label: 'Warmup mail in the inbox', color: '#2f855a' },
              { key: 'junk', label: 'Warmup mail in junk', color: '#c53030' },
            ]}
          />
        </>
      )}
    </section>
  );
}

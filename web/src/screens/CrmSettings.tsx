import { useState } from 'react';
import { SYNCED_FIELDS, type FieldOwner, type SyncedField } from '../../../src/crm/field-ownership.ts';
import { call, errorMessage, ws } from '../api.ts';
import type { ApiResponse } from '../types.ts';
import { ErrorNote, SubmitButton } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { FIELD_NAMES } from './crm-words.ts';

type Settings = ApiResponse<'GET /api/workspaces/:workspaceId/crm/connections/:connectionId/settings'>;
type StopRules = Settings['stopRules'];

/**
 * A connection's field ownership and stop rules (docs/crm.md "Field ownership", "Stop rules"), as
 * the API serves them: who owns each synced field (read), and, behind "Change", a form to give a
 * field to the other side (the fixed ones cannot move) and to switch the stop rules.
 */
export function CrmSettings({ workspaceId, connectionId, crm }: { workspaceId: string; connectionId: string; crm: string }) {
  const path = `crm/connections/${connectionId}/settings`;
  const loaded = useLoad(() => call('GET /api/workspaces/:workspaceId/crm/connections/:connectionId/settings', ws(workspaceId, path)), [workspaceId, connectionId]);
  const [editing, setEditing] = useState(false);
  const s = loaded.data;
  return (
    <div className="crm-owners">
      <h4>Field ownership</h4>
      <p className="muted small">Each field is written by its owner only; a change from the other side is logged as a conflict, never copied back.</p>
      <ErrorNote error={loaded.error} />
      {s && !editing && (
        <>
          <FieldOwnership crm={crm} owners={s.fieldOwners} />
          <p className="small" style={{ margin: 0 }}>
            Stops a lead's sequences when: {stopRuleWords(s.stopRules).join('; ') || 'never (every rule is off)'}.
          </p>
          <div className="row">
            <button type="button" className="btn btn-quiet" onClick={() => setEditing(true)}>
              Change ownership or stop rules
            </button>
          </div>
        </>
      )}
      {s && editing && (
        <SettingsForm
          workspaceId={workspaceId}
          path={path}
          connectionId={connectionId}
          crm={crm}
          settings={s}
          onDone={(saved) => {
            setEditing(false);
            if (saved) loaded.reload();
          }}
        />
      )}
    </div>
  );
}

/** Which side owns each synced contact field: a function of the map alone. */
export function FieldOwnership({ crm, owners }: { crm: string; owners: Readonly<Record<string, string>> }) {
  const of = (side: FieldOwner) => SYNCED_FIELDS.filter((f) => owners[f] === side).map((f) => FIELD_NAMES[f]);
  return (
    <dl>
      <div>
        <dt>{crm} owns</dt>
        <dd>{of('crm').join(', ') || 'no field'}</dd>
      </div>
      <div>
        <dt>Cadenza owns</dt>
        <dd>{of('cadenza').join(', ') || 'no field'}</dd>
      </div>
    </dl>
  );
}

function stopRuleWords(r: StopRules): string[] {
  const out: string[] = [];
  if (r.doNotContact) out.push('marked do-not-contact (the address is also suppressed)');
  if (r.dealCreated) out.push('a deal is created for them');
  if (r.dealStages.length) out.push(`a deal moves to ${r.dealStages.join(', ')}`);
  if (r.ownerChanged === 'stop') out.push('their owner changes');
  if (r.lifecycleStages.length) out.push(`their lifecycle stage becomes ${r.lifecycleStages.join(', ')}`);
  return out;
}

const list = (text: string) =>
  text
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

function SettingsForm({ workspaceId, path, connectionId, crm, settings, onDone }: { workspaceId: string; path: string; connectionId: string; crm: string; settings: Settings; onDone: (saved: boolean) => void }) {
  const [owners, setOwners] = useState<Record<string, string>>({ ...settings.fieldOwners });
  const [rules, setRules] = useState<StopRules>(settings.stopRules);
  const [stages, setStages] = useState(settings.stopRules.dealStages.join(', '));
  const [lifecycle, setLifecycle] = useState(settings.stopRules.lifecycleStages.join(', '));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const fixed = new Set(settings.fixedFields);
  const save = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const changed = Object.fromEntries(Object.entries(owners).filter(([f, o]) => settings.fieldOwners[f] !== o && !fixed.has(f))) as Record<string, FieldOwner>;
      await call('PATCH /api/workspaces/:workspaceId/crm/connections/:connectionId/settings', ws(workspaceId, path), {
        ...(Object.keys(changed).length ? { fieldOwners: changed } : {}),
        stopRules: { ...rules, dealStages: list(stages), lifecycleStages: list(lifecycle) },
      });
      onDone(true);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const id = (x: string) => `crm-${connectionId}-${x}`;
  return (
    <form
      className="stack"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <fieldset className="crm-owner-edit">
        <legend>Who owns each field</legend>
        {SYNCED_FIELDS.map((f: SyncedField) => (
          <label key={f} className="row small" htmlFor={id(f)}>
            <span className="crm-owner-field">{FIELD_NAMES[f]}</span>
            <select id={id(f)} value={owners[f]} disabled={fixed.has(f)} onChange={(e) => setOwners({ ...owners, [f]: e.target.value })}>
              <option value="crm">{crm}</option>
              <option value="cadenza">Cadenza</option>
            </select>
            {fixed.has(f) && <span className="muted">fixed</span>}
          </label>
        ))}
      </fieldset>
      <fieldset className="stack small">
        <legend>Stop a lead's sequences when, in {crm}</legend>
        <label className="check">
          <input type="checkbox" checked={rules.doNotContact} onChange={(e) => setRules({ ...rules, doNotContact: e.target.checked })} /> they are marked do-not-contact (the address is also suppressed)
        </label>
        <label className="check">
          <input type="checkbox" checked={rules.dealCreated} onChange={(e) => setRules({ ...rules, dealCreated: e.target.checked })} /> a deal is created for them
        </label>
        <label className="check">
          <input type="checkbox" checked={rules.ownerChanged === 'stop'} onChange={(e) => setRules({ ...rules, ownerChanged: e.target.checked ? 'stop' : 'ignore' })} /> their owner changes
        </label>
        <label htmlFor={id('stages')}>A deal moves to one of these stages ({crm}'s stage ids, comma-separated)</label>
        <input id={id('stages')} value={stages} onChange={(e) => setStages(e.target.value)} placeholder="closedwon" />
        <label htmlFor={id('lifecycle')}>Their lifecycle stage becomes one of</label>
        <input id={id('lifecycle')} value={lifecycle} onChange={(e) => setLifecycle(e.target.value)} placeholder="customer" />
      </fieldset>
      <ErrorNote error={error} />
      <div className="row">
        <SubmitButton busy={busy} busyText="Saving…">
          Save ownership and stop rules
        </SubmitButton>
        <button type="button" className="btn" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

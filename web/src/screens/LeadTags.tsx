import { useState } from 'react';
import { call, ws } from '../api.ts';
import { ErrorNote } from '../ui/parts.tsx';
import { useSubmit } from '../ui/use-submit.ts';

/** A lead's tags (add one, remove one: the bulk route on this one lead) and the static lists it is in (the Leads screen's list menu shows each). */
export function LeadTags({ workspaceId, leadId, tags, lists, onChanged }: { workspaceId: string; leadId: string; tags: string[]; lists: Array<{ id: string; name: string }>; onChanged: () => void }) {
  const [tag, setTag] = useState('');
  const act = (kind: 'tag' | 'untag', t: string) => call('POST /api/workspaces/:workspaceId/leads/bulk', ws(workspaceId, 'leads/bulk'), { target: { leadIds: [leadId] }, action: { kind, tag: t } });
  const { busy, error, setError, submit } = useSubmit(async () => {
    await act('tag', tag);
    setTag('');
    onChanged();
  });
  const remove = async (t: string) => {
    try {
      await act('untag', t);
      onChanged();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <>
      <h2>Tags</h2>
      {tags.length === 0 ? (
        <p className="muted">No tags.</p>
      ) : (
        <ul className="plain row tag-list" aria-label="Tags">
          {tags.map((t) => (
            <li key={t} className="badge badge-info tag">
              {t}{' '}
              <button type="button" className="btn-link" aria-label={`Remove the tag ${t}`} onClick={() => void remove(t)}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <form className="row" onSubmit={(e) => void submit(e)}>
        <label className="sr-only" htmlFor="lead-new-tag">
          New tag
        </label>
        <input id="lead-new-tag" placeholder="New tag" maxLength={60} value={tag} onChange={(e) => setTag(e.target.value)} />
        <button type="submit" className="btn" disabled={busy || !tag.trim()}>
          Add tag
        </button>
      </form>
      <ErrorNote error={error} />
      <h2>Lists</h2>
      {lists.length === 0 ? (
        <p className="muted">In no list.</p>
      ) : (
        <ul className="plain">
          {lists.map((l) => (
            <li key={l.id}>{l.name}</li>
          ))}
        </ul>
      )}
    </>
  );
}

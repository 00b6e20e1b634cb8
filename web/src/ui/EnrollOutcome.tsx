import type { EnrollResult } from '../types.ts';

/** What an enrollment of many leads did: how many were enrolled, and each refusal with its reason. */
export function EnrollOutcome({ result, label }: { result: EnrollResult; label?: string }) {
  return (
    <div role="status">
      <p className="note note-ok">
        {result.enrolled} enrolled{result.refused.length ? `, ${result.refused.length} refused` : ''}.
      </p>
      {result.refused.length > 0 && (
        <ul className="small" aria-label={label ?? 'Not enrolled'}>
          {result.refused.slice(0, 50).map((r) => (
            <li key={r.leadId}>
              {r.email ?? r.leadId}: {r.reason.replace(/_/g, ' ')}
              {r.detail ? ` (${r.detail})` : ''}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

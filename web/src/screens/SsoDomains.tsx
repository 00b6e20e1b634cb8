import { useState } from 'react';
import { call, errorMessage, ws } from '../api.ts';
import type { ApiResponse } from '../types.ts';
import { CopyField } from '../ui/CopyField.tsx';
import { Badge, ErrorNote } from '../ui/parts.tsx';

type Proof = ApiResponse<'GET /api/workspaces/:workspaceId/sso'>['domains'][number];

/**
 * The DNS proof of each domain listed for single sign-on (0116_sso_domain_proof.sql): the TXT
 * record to publish, the state, and a button that checks it now. Until a domain is verified it
 * admits nobody new, and its addresses do not find the workspace from the sign-in page. A verified
 * domain is checked again every day (0130); while those checks miss the record, it says so.
 */
export function SsoDomains({ workspaceId, domains, onChecked }: { workspaceId: string; domains: Proof[]; onChecked: () => void }) {
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  if (domains.length === 0) return null;
  const verify = async (domain: string) => {
    setBusy(domain);
    setError(undefined);
    try {
      await call('POST /api/workspaces/:workspaceId/sso/domains/:domain/verify', ws(workspaceId, `sso/domains/${encodeURIComponent(domain)}/verify`));
      onChecked();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <section className="stack" aria-labelledby="sso-domains">
      <h3 id="sso-domains">Domain verification</h3>
      <p className="muted">A domain lets new people join only once its DNS proves it is yours: publish the TXT record below, then verify.</p>
      <ErrorNote error={error} />
      <ul className="stack sso-domains" aria-label="Email domains and their verification">
        {domains.map((d) => (
          <li key={d.domain} className="stack">
            <div className="row">
              <strong>{d.domain}</strong>
              {d.verifiedAt ? <Badge tone="ok">Verified</Badge> : <Badge tone="warn">Not verified</Badge>}
            </div>
            {/* A verified domain whose daily re-check no longer finds the record shows it again: it is about to lose its proof. */}
            {(!d.verifiedAt || d.checkError) && (
              <>
                <CopyField label={`TXT record name for ${d.domain}`} value={d.recordName} copyLabel={`Copy the record name for ${d.domain}`} />
                <CopyField label={`TXT record value for ${d.domain}`} value={d.recordValue} copyLabel={`Copy the record value for ${d.domain}`} />
              </>
            )}
            {d.checkError && (
              <p className="muted" role="status">
                {d.verifiedAt ? 'Daily check' : 'Last check'}: {d.checkError}
              </p>
            )}
            <div className="row">
              <button type="button" className="btn" disabled={busy !== undefined} onClick={() => void verify(d.domain)}>
                {busy === d.domain ? 'Checking DNS…' : d.verifiedAt ? `Check ${d.domain} again` : `Verify ${d.domain}`}
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

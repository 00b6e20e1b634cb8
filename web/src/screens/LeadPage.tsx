import { api, ws } from '../api.ts';
import { navigate } from '../router.ts';
import type { LeadDetail } from '../types.ts';
import { Badge, Empty, ErrorNote, PageHeader, when } from '../ui/parts.tsx';
import { useLoad } from '../ui/use-load.ts';
import { CallRecordings } from '../dialer/CallRecordings.tsx';
import { EnrollmentSends } from './EnrollmentSends.tsx';
import { LeadTags } from './LeadTags.tsx';
import { MoveEnrollment, stateTone } from './MoveEnrollments.tsx';

const kindText = { event: 'Sequence', sent: 'Sent', received: 'Received', open: 'Open', click: 'Click', task: 'Task', call: 'Call' } as const;
const kindTone = { event: 'muted', sent: 'info', received: 'ok', open: 'muted', click: 'muted', task: 'warn', call: 'info' } as const;

/** One lead: their fields, their enrollments and everything that happened to them, newest first. */
export function LeadPage({ workspaceId, leadId }: { workspaceId: string; leadId: string }) {
  const d = useLoad(() => api<LeadDetail>('GET', ws(workspaceId, `leads/${leadId}`)), [workspaceId, leadId]);
  const l = d.data?.lead;
  const name = l ? [l.firstName, l.lastName].filter(Boolean).join(' ') || l.email : 'Lead';
  return (
    <>
      <PageHeader title={name}>
        <a className="btn btn-quiet" href="/leads" onClick={(e) => (e.preventDefault(), navigate('/leads'))}>
          All leads
        </a>
      </PageHeader>
      <ErrorNote error={d.error} />
      {d.data && l && (
        <div className="editor">
          <section className="card stack" aria-label="Timeline">
            <h2>Timeline</h2>
            {d.data.timeline.length === 0 ? (
              <Empty>Nothing has happened to this lead yet.</Empty>
            ) : (
              <ol className="timeline">
                {d.data.timeline.map((t, i) => (
                  <li key={i}>
                    <span className="muted small timeline-when">{when(t.at)}</span> <Badge tone={kindTone[t.kind]}>{kindText[t.kind]}</Badge> <span>{t.what.replace(/_/g, ' ')}</span>
                    {t.detail && <span className="muted small"> · {t.detail.replace(/_/g, ' ')}</span>}
                    {t.sequenceName && <span className="muted small"> · {t.sequenceName}</span>}
                  </li>
                ))}
              </ol>
            )}
          </section>
          <CallRecordings workspaceId={workspaceId} leadId={leadId} />
          <aside className="card stack" aria-label="Lead">
            <dl className="facts">
              <dt>Email</dt>
              <dd>{l.email}</dd>
              <dt>Company</dt>
              <dd>{l.company ?? '—'}</dd>
              <dt>Title</dt>
              <dd>{l.title ?? '—'}</dd>
              <dt>Phone</dt>
              <dd>{l.phone ? <a href={`tel:${l.phone}`}>{l.phone}</a> : '—'}</dd>
              <dt>Country</dt>
              <dd>{l.country ?? '—'}</dd>
              <dt>Time zone</dt>
              <dd>{l.timeZone ?? '—'}</dd>
              {Object.entries(l.custom).map(([k, v]) => (
                <div key={k} className="facts-row">
                  <dt>{k}</dt>
                  <dd>{v}</dd>
                </div>
              ))}
            </dl>
            <LeadTags workspaceId={workspaceId} leadId={leadId} tags={d.data.tags} lists={d.data.lists} onChanged={d.reload} />
            <h2>Sequences</h2>
            {d.data.enrollments.length === 0 ? (
              <p className="muted">Not enrolled.</p>
            ) : (
              <ul className="plain">
                {d.data.enrollments.map((e) => (
                  <li key={e.id}>
                    {e.sequenceName}: <Badge tone={stateTone(e.state)}>{e.state}</Badge>
                    {e.reason && <span className="muted small"> ({e.reason})</span>}
                    {(e.state === 'active' || e.state === 'paused') && <MoveEnrollment workspaceId={workspaceId} enrollmentId={e.id} sequenceId={e.sequenceId} onMoved={d.reload} />}
                    <EnrollmentSends workspaceId={workspaceId} enrollmentId={e.id} sequenceName={e.sequenceName} />
                  </li>
                ))}
              </ul>
            )}
          </aside>
        </div>
      )}
    </>
  );
}

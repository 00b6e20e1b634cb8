import { csvCell } from '../../common/csv-cell.ts';
import type { AuditEvent } from './audit-log.ts';

export const AUDIT_CSV_HEADER = 'at,action,actor_kind,actor,target,ip,detail';

/** One CSV line per event; every cell goes through csvCell, which neutralises formula-looking text. */
export function auditCsvLine(e: AuditEvent): string {
  return [e.at.toISOString(), e.action, e.actorKind, e.actorLabel, e.target ?? '', e.ip ?? '', JSON.stringify(e.detail)].map(csvCell).join(',');
}

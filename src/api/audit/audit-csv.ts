import { csvRecord } from '../../common/csv-write.ts';
import type { AuditEvent } from './audit-log.ts';

export const AUDIT_CSV_HEADER = 'at,action,actor_kind,actor,target,ip,detail';

/** One CSV line per event (no line end); the one CSV writer neutralises formula-looking text. */
export function auditCsvLine(e: AuditEvent): string {
  return csvRecord([e.at.toISOString(), e.action, e.actorKind, e.actorLabel, e.target ?? '', e.ip ?? '', JSON.stringify(e.detail)], ',', '');
}

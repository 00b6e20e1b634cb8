import { csvRecord } from '../common/csv-write.ts';
import type { Db } from '../store/store.ts';
import { erasedMarker, type ErasureKey } from '../common/erasure-key.ts';
import { PERSONAL_TABLES } from './sql/personal-data.ts';
import { findSubject } from './subject.ts';
import { TRANSCRIPT_SECTION, transcriptsOfLeads } from '../dialer/transcribe/queue.ts';
import type { BytesSealer } from '../mailbox/vault.ts';

/**
 * The subject access export: everything the workspace stores about one address, one section per
 * table (sql/personal-data.ts), as JSON-ready rows (instants as ISO text, bytes as text). Never a
 * credential: no table that holds one is listed, and the mailbox section names the mailbox only.
 */
export interface SubjectExport {
  email: string;
  workspaceId: string;
  exportedAt: string;
  /** True when the address was erased from this workspace (its keyed hash is in the suppression list). */
  erased: boolean;
  sections: Record<string, Array<Record<string, unknown>>>;
}

export async function exportSubject(db: Db, workspaceId: string, email: string, o: { now: number; key?: ErasureKey; sealer?: BytesSealer }): Promise<SubjectExport> {
  const s = await findSubject(db, workspaceId, email);
  const sections: SubjectExport['sections'] = {};
  for (const t of PERSONAL_TABLES) sections[t.section] = (await t.find(db, s)).map(plain);
  // What was said on the person's recorded calls, opened from the sealed copies (the audio itself
  // is played or downloaded per call: GET …/calls/{id}/recording). Without the vault: not listed.
  if (o.sealer) sections[TRANSCRIPT_SECTION] = await transcriptsOfLeads(db, o.sealer, workspaceId, s.leadIds);
  let erased = false;
  if (o.key) {
    const marker = erasedMarker(o.key, workspaceId, s.email);
    erased = !!(await db.selectFrom('suppression').select('reason').where('workspace_id', '=', workspaceId).where('email_norm', '=', marker).executeTakeFirst());
  }
  return { email: s.email, workspaceId, exportedAt: new Date(o.now).toISOString(), erased, sections };
}

/** Rows that can be written as JSON: instants as ISO text, bytes as UTF-8 text, bigints as numbers. */
function plain(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (v instanceof Date) out[k] = v.toISOString();
    else if (v instanceof Uint8Array) out[k] = Buffer.from(v).toString('utf8');
    else if (typeof v === 'bigint') out[k] = Number(v);
    else out[k] = v;
  }
  return out;
}

export const EXPORT_SECTIONS = [...PERSONAL_TABLES.map((t) => t.section), TRANSCRIPT_SECTION];

/** One section as CSV (RFC 4180, a header of the union of its rows' columns; objects and arrays as JSON). */
export function sectionCsv(rows: ReadonlyArray<Record<string, unknown>>): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  return csvRecord(columns) + rows.map((r) => csvRecord(columns.map((c) => cell(r[c])))).join('');
}

import { experimentExposures } from '../ops/figures.ts';
import type { Db } from '../store/store.ts';
import { experimentReport, type ExperimentReport } from './report.ts';
import { settingsOf } from './settings.ts';
import { storedExperiments } from './sql/arms.ts';

/**
 * Every experiment of a sequence's steps with its arms, rates and verdict at `now`. A step whose
 * variant a sequence experiment fixes is not one (`fixed`, by step key: the caller reads them,
 * sequence/experiment-report.ts fixedStepKeys): its variants are that experiment's arms, and its
 * sends would count twice.
 */
export async function sequenceExperiments(db: Db, workspaceId: string, sequenceId: string, now: number, fixed: ReadonlySet<string> = new Set()): Promise<ExperimentReport[]> {
  const stored = await storedExperiments(db, workspaceId, sequenceId);
  const candidates = stored.filter((s) => s.variants.length >= 2 && !fixed.has(s.stepKey));
  const windows = candidates.map((s) => ({ stepId: s.stepId, days: settingsOf(s.settings).replyWindowDays }));
  const rows = await experimentExposures(db, workspaceId, sequenceId, windows, new Date(now));
  return candidates.map((s) => experimentReport(s, rows)).filter((r): r is ExperimentReport => r !== null);
}

/**
 * Input checks for the day planner: a pool assembled from rows and remote schedules can hold
 * anything, and a bad member must be answered with its problem named, never a crash or a plan
 * that silently breaks a rule.
 */
import { cadenzaError } from '../../common/errors.ts';
import { defaultWarmupPlanConfig, type WarmupMember, type WarmupPlanConfig, type WarmupPlanInput } from './types.ts';

const MAX_PROBLEMS = 20;

const count = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const instant = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const label = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 320;

function memberProblems(m: WarmupMember, i: number): string[] {
  const at = `members[${i}]`;
  const p: string[] = [];
  if (!label(m.id)) p.push(`${at}.id must be a non-empty string`);
  if (!label(m.provider)) p.push(`${at}.provider must be a non-empty string`);
  if (!label(m.domain)) p.push(`${at}.domain must be a non-empty string`);
  if (!label(m.workspace)) p.push(`${at}.workspace must be a non-empty string`);
  if (typeof m.canSend !== 'boolean') p.push(`${at}.canSend must be a boolean`);
  for (const k of ['rampDay', 'target', 'remainingCap', 'minGapMs'] as const) if (!count(m[k])) p.push(`${at}.${k} must be an integer >= 0`);
  if (m.receiveLimit !== undefined && !count(m.receiveLimit)) p.push(`${at}.receiveLimit must be an integer >= 0`);
  if (!m.window || !instant(m.window.start) || !instant(m.window.end) || m.window.end < m.window.start) p.push(`${at}.window must be {start, end} instants with end >= start`);
  if (!Array.isArray(m.busy) || !m.busy.every(instant)) p.push(`${at}.busy must be a list of instants`);
  return p;
}

/** The config with defaults filled in; throws INVALID_INPUT naming each bad value. */
export function planConfig(partial: Partial<WarmupPlanConfig> | undefined): WarmupPlanConfig {
  const c = { ...defaultWarmupPlanConfig, ...partial };
  const p: string[] = [];
  for (const k of ['rampStart', 'rampDays', 'minReceive', 'pairCooldownDays', 'maxPerReceiverDomain', 'maxPerDomainPair'] as const) if (!count(c[k])) p.push(`config.${k} must be an integer >= 0`);
  if (c.rampDays === 0) p.push('config.rampDays must be at least 1');
  for (const k of ['volumeJitter', 'maxSameProviderShare'] as const) if (!(typeof c[k] === 'number' && c[k] >= 0 && c[k] <= 1)) p.push(`config.${k} must be in [0, 1]`);
  if (!(typeof c.receiveRatio === 'number' && c.receiveRatio >= 0 && c.receiveRatio <= 100)) p.push('config.receiveRatio must be in [0, 100]');
  if (p.length) throw cadenzaError('INVALID_INPUT', `invalid warmup plan config: ${p.join('; ')}`, { problems: p });
  return c;
}

/** Throws INVALID_INPUT listing the first problems (bad fields, duplicate ids, bad pairs). */
export function validatePlanInput(input: WarmupPlanInput): void {
  const problems: string[] = [];
  const ids = new Set<string>();
  if (!Array.isArray(input.members)) problems.push('members must be a list');
  else
    input.members.forEach((m, i) => {
      if (problems.length >= MAX_PROBLEMS) return;
      if (m === null || typeof m !== 'object') {
        problems.push(`members[${i}] must be an object`);
        return;
      }
      problems.push(...memberProblems(m, i));
      if (ids.has(m.id)) problems.push(`members[${i}].id '${String(m.id)}' appears twice`);
      ids.add(m.id);
    });
  if (!Array.isArray(input.recentPairs)) problems.push('recentPairs must be a list');
  else
    input.recentPairs.forEach((r, i) => {
      if (problems.length >= MAX_PROBLEMS) return;
      if (r === null || typeof r !== 'object' || !label(r.a) || !label(r.b) || !count(r.daysAgo)) problems.push(`recentPairs[${i}] must be {a, b, daysAgo >= 0}`);
    });
  if (problems.length) {
    const shown = problems.slice(0, MAX_PROBLEMS);
    throw cadenzaError('INVALID_INPUT', `invalid warmup pool: ${shown.join('; ')}`, { problems: shown });
  }
}

import { cadenzaError } from '../common/errors.ts';
import type { CrmContact, CrmDeal } from './connector.ts';

/**
 * What in the CRM stops a lead's sequences (docs/crm.md "Stop rules"), per connection. Each rule
 * looks at a change against the version before it (the mirror's), so a rule fires when the thing
 * happens, not again on every later change of the same record:
 *
 *   doNotContact      the CRM's do-not-contact flag turned on → the address is suppressed (promise
 *                     6: every sequence, every future import) and its enrollments stop
 *   dealCreated       a deal created after the connection was made, for the contact → stop
 *                     (deals older than the connection are history, not news)
 *   dealStages        a deal moved into one of these stages (the CRM's stage ids) → stop
 *   ownerChanged      the record's owner changed → 'stop' (default) or 'ignore'
 *   lifecycleStages   the lifecycle stage became one of these (e.g. customer) → stop
 *
 * A rule is pure: it returns the verdict and the reason the stop is journalled with. Stored per
 * connection as overrides of the defaults (0055 stop_rules), so a new default reaches connections
 * that never changed it.
 */
export interface StopRules {
  doNotContact: boolean;
  dealCreated: boolean;
  dealStages: string[];
  ownerChanged: 'stop' | 'ignore';
  lifecycleStages: string[];
}

export const DEFAULT_STOP_RULES: Readonly<StopRules> = {
  doNotContact: true,
  dealCreated: true,
  dealStages: [],
  ownerChanged: 'stop',
  lifecycleStages: ['customer'],
};

/** The rules in force: the defaults under the stored overrides (unknown keys from an older version are dropped). */
export function effectiveStopRules(stored: unknown): StopRules {
  const o = (stored ?? {}) as Partial<StopRules>;
  return {
    doNotContact: typeof o.doNotContact === 'boolean' ? o.doNotContact : DEFAULT_STOP_RULES.doNotContact,
    dealCreated: typeof o.dealCreated === 'boolean' ? o.dealCreated : DEFAULT_STOP_RULES.dealCreated,
    dealStages: Array.isArray(o.dealStages) ? o.dealStages.map(String) : [...DEFAULT_STOP_RULES.dealStages],
    ownerChanged: o.ownerChanged === 'ignore' || o.ownerChanged === 'stop' ? o.ownerChanged : DEFAULT_STOP_RULES.ownerChanged,
    lifecycleStages: Array.isArray(o.lifecycleStages) ? o.lifecycleStages.map(String) : [...DEFAULT_STOP_RULES.lifecycleStages],
  };
}

/** The overrides to store after a change: only what differs from the defaults. */
export function stopRuleOverrides(rules: StopRules): Partial<StopRules> {
  const out: Partial<StopRules> = {};
  for (const k of Object.keys(DEFAULT_STOP_RULES) as Array<keyof StopRules>) {
    if (JSON.stringify(rules[k]) !== JSON.stringify(DEFAULT_STOP_RULES[k])) (out as Record<string, unknown>)[k] = rules[k];
  }
  return out;
}

export function checkStopRules(rules: StopRules): void {
  for (const k of ['dealStages', 'lifecycleStages'] as const) {
    if (rules[k].length > 50 || rules[k].some((s) => s.trim() === '' || s.length > 100)) throw cadenzaError('INVALID_INPUT', `${k}: at most 50 stage ids of 1 to 100 characters`, { field: k });
  }
}

export type ContactVerdict = { suppress: boolean; stop: string | null };

/** What a contact's change asks for. `before`: the mirror's fields of the previous version, or null (first seen). */
export function contactVerdict(rules: StopRules, before: Partial<CrmContact> | null, after: CrmContact, crmOwns: (field: 'doNotContact' | 'ownerEmail' | 'lifecycleStage') => boolean): ContactVerdict {
  const suppress = rules.doNotContact && crmOwns('doNotContact') && after.doNotContact && before?.doNotContact !== true;
  if (before && rules.ownerChanged === 'stop' && crmOwns('ownerEmail') && (before.ownerEmail ?? null) !== after.ownerEmail) {
    return { suppress, stop: `CRM: owner changed to ${after.ownerEmail ?? 'nobody'}` };
  }
  const stage = after.lifecycleStage;
  if (stage && crmOwns('lifecycleStage') && rules.lifecycleStages.includes(stage) && before?.lifecycleStage !== stage) {
    return { suppress, stop: `CRM: lifecycle stage ${stage}` };
  }
  return { suppress, stop: null };
}

/** Why a deal's change stops its contacts' enrollments, or null. */
export function dealVerdict(rules: StopRules, before: { stage: string } | null, after: CrmDeal, connectedAt: number): string | null {
  if (!before && rules.dealCreated && Date.parse(after.createdAt) >= connectedAt) return `CRM: deal created (${after.name})`;
  if (rules.dealStages.includes(after.stage) && before?.stage !== after.stage) return `CRM: deal ${after.name} moved to ${after.stageLabel ?? after.stage}`;
  return null;
}

/**
 * The independent checker of a warmup day plan: every rule the planner must keep, written again
 * the plain way (string keys, one pass per rule, no shared code with planner.ts but the ramp's
 * definition and the input's types), so a bug in the planner's bookkeeping cannot hide itself.
 * Used by the property tests and the warmup-plan benchmark, and cheap enough to run on every
 * real plan before it is written.
 */
import { receiveLimit, warmupCeiling } from './ramp.ts';
import type { WarmupMember, WarmupPlan, WarmupPlanInput } from './types.ts';
import { planConfig } from './validate.ts';

export type WarmupRule =
  | 'unknown-member'
  | 'remote-sender'
  | 'self'
  | 'same-domain'
  | 'same-workspace'
  | 'sender-volume'
  | 'receiver-limit'
  | 'pair-twice'
  | 'pair-cooldown'
  | 'receiver-domain'
  | 'domain-pair'
  | 'same-provider-share'
  | 'outside-window'
  | 'gap';

export interface WarmupViolation {
  rule: WarmupRule;
  detail: string;
}

export function checkWarmupPlan(input: WarmupPlanInput, plan: WarmupPlan): WarmupViolation[] {
  const c = planConfig(input.config);
  const out: WarmupViolation[] = [];
  const v = (rule: WarmupRule, detail: string) => out.push({ rule, detail });
  const byId = new Map<string, WarmupMember>(input.members.map((m) => [m.id, m]));
  const unordered = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);
  const cooling = new Set(input.recentPairs.filter((p) => p.daysAgo < c.pairCooldownDays).map((p) => unordered(p.a, p.b)));

  const sentBy = new Map<string, number[]>();
  const receivedBy = new Map<string, number>();
  const pairs = new Set<string>();
  const perReceiverDomain = new Map<string, number>();
  const perDomainPair = new Map<string, number>();
  const sameProvider = new Map<string, number>();
  const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

  for (const s of plan.sends) {
    const from = byId.get(s.sender);
    const to = byId.get(s.receiver);
    if (!from || !to) {
      v('unknown-member', `${s.sender} -> ${s.receiver}`);
      continue;
    }
    const what = `${from.id} -> ${to.id}`;
    if (!from.canSend) v('remote-sender', what);
    if (from.id === to.id) v('self', what);
    const fd = from.domain.toLowerCase();
    const td = to.domain.toLowerCase();
    if (fd === td) v('same-domain', `${what} (${fd})`);
    if (from.workspace === to.workspace) v('same-workspace', `${what} (${from.workspace})`);
    const pair = unordered(from.id, to.id);
    if (pairs.has(pair)) v('pair-twice', what);
    pairs.add(pair);
    if (cooling.has(pair)) v('pair-cooldown', what);
    add(perReceiverDomain, `${from.id}\u0000${td}`);
    add(perDomainPair, `${fd}\u0000${td}`);
    if (from.provider === to.provider) add(sameProvider, from.id);
    add(receivedBy, to.id);
    if (!(s.at >= from.window.start && s.at < from.window.end)) v('outside-window', `${what} at ${s.at}, window [${from.window.start}, ${from.window.end})`);
    const times = sentBy.get(from.id) ?? [];
    times.push(s.at);
    sentBy.set(from.id, times);
  }

  for (const [id, times] of sentBy) {
    const m = byId.get(id)!;
    const allowed = Math.min(warmupCeiling(m, c), m.remainingCap);
    if (times.length > allowed) v('sender-volume', `${id} sends ${times.length}, allowed ${allowed} (ramp ${warmupCeiling(m, c)}, cap left ${m.remainingCap})`);
    const same = sameProvider.get(id) ?? 0;
    if (same > Math.floor(times.length * c.maxSameProviderShare)) v('same-provider-share', `${id}: ${same} of ${times.length} to its own provider`);
    const all = [...times.map((t) => ({ t, own: true })), ...m.busy.map((t) => ({ t, own: false }))].sort((a, b) => a.t - b.t);
    for (let k = 1; k < all.length; k++) {
      const a = all[k - 1]!;
      const b = all[k]!;
      if ((a.own || b.own) && b.t - a.t < m.minGapMs) v('gap', `${id}: sends at ${a.t} and ${b.t}, gap ${m.minGapMs} ms`);
    }
  }
  for (const [id, k] of receivedBy) {
    const limit = receiveLimit(byId.get(id)!, c);
    if (k > limit) v('receiver-limit', `${id} receives ${k}, limit ${limit}`);
  }
  for (const [key, k] of perReceiverDomain) if (k > c.maxPerReceiverDomain) v('receiver-domain', `${key.replace('\u0000', ' -> @')}: ${k}`);
  for (const [key, k] of perDomainPair) if (k > c.maxPerDomainPair) v('domain-pair', `${key.replace('\u0000', ' -> ')}: ${k}`);
  return out;
}

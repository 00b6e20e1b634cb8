/**
 * The warmup day planner's input and output. A member is one mailbox of the pool as the planner
 * sees it: labels (provider, domain, workspace) and numbers (ramp day, target, remaining cap, its
 * sending window and the campaign sends already planned in it). Nothing here holds a credential,
 * so a member can be remote (federation: an address and a schedule from another installation):
 * such a member receives (up to its declared `receiveLimit`) and never sends from this plan.
 */

export interface WarmupMember {
  /** Stable id: a mailbox id, or for a remote member its address. Unique in the pool. */
  id: string;
  /**
   * Who hosts the mailbox, as an opaque label: 'google', 'microsoft', or the host family of an
   * SMTP/IMAP mailbox ('yahoo', 'zoho', 'other'). Pairs across labels build reputation with each.
   */
  provider: string;
  /** The address's domain, lower case. Members of one domain never write to each other. */
  domain: string;
  /** The workspace (installation-scoped id; a remote member gets its installation's label). */
  workspace: string;
  /** False for a remote member: it has no credentials here, so this plan never sends from it. */
  canSend: boolean;
  /** Days since the mailbox joined the pool (0 on its first day). */
  rampDay: number;
  /** The daily warmup volume the ramp rises to. */
  target: number;
  /**
   * The mailbox's daily cap minus the campaign sends planned or made today: warmup and campaign
   * share one cap, so warmup takes only what campaigns leave.
   */
  remainingCap: number;
  /** The sender's window today, as instants [start, end) in ms (from its calendar: zone, hours). */
  window: { start: number; end: number };
  /** Campaign sends already planned today (ms): warmup keeps `minGapMs` from each, as from its own. */
  busy: readonly number[];
  /** The mailbox's minimum gap between two sends (ms), shared by warmup and campaign sends. */
  minGapMs: number;
  /** For a remote member: how many warmup mails it accepts today (its schedule). Else derived from its volume. */
  receiveLimit?: number;
}

/** A pair of members that wrote to each other recently (either direction), `daysAgo` >= 1. */
export interface RecentPair {
  a: string;
  b: string;
  daysAgo: number;
}

export interface WarmupPlanConfig {
  /** First-day volume (capped by the target). */
  rampStart: number;
  /** Days from rampStart to the target, rising linearly. */
  rampDays: number;
  /** The day's volume is drawn in [volume × (1 − jitter), volume]: days differ, never above the ramp. */
  volumeJitter: number;
  /** A member receives at most max(minReceive, ceil(its volume × receiveRatio)) warmup mails a day. */
  receiveRatio: number;
  minReceive: number;
  /** A pair that wrote to each other fewer than this many days ago is not paired again. */
  pairCooldownDays: number;
  /** Of a sender's sends, at most floor(n × share) go to its own provider (the rest cross providers). */
  maxSameProviderShare: number;
  /** A sender writes to at most this many members of one domain a day. */
  maxPerReceiverDomain: number;
  /** Between two domains (ordered: from → to), at most this many warmup mails a day. */
  maxPerDomainPair: number;
}

export const defaultWarmupPlanConfig: WarmupPlanConfig = {
  rampStart: 2,
  rampDays: 28,
  volumeJitter: 0.2,
  receiveRatio: 1.5,
  minReceive: 2,
  pairCooldownDays: 7,
  maxSameProviderShare: 1 / 3,
  maxPerReceiverDomain: 1,
  maxPerDomainPair: 3,
};

export interface WarmupPlanInput {
  members: readonly WarmupMember[];
  recentPairs: readonly RecentPair[];
  config?: Partial<WarmupPlanConfig>;
}

export interface PlannedWarmupSend {
  sender: string;
  receiver: string;
  /** The instant to send, inside the sender's window, `minGapMs` from its other sends. */
  at: number;
}

export interface WarmupPlan {
  /** In send-time order. */
  sends: PlannedWarmupSend[];
  /** Per sender id: how many it wanted today (its jittered volume within its cap and window) and how many it got. */
  shortfall: Array<{ id: string; wanted: number; planned: number }>;
}

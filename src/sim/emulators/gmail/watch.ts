import type { GmailMailbox, HistoryChange } from './mailbox.ts';
import type { PubSubEmulator } from './pubsub.ts';

/**
 * users.watch state per mailbox and what it publishes (guides/push): after every change a watched
 * mailbox publishes `{emailAddress, historyId}` (its new id) to the watch's topic, if the change
 * touches a label the watch includes (labelFilterBehavior INCLUDE, the default) or not one it
 * excludes. `watch` publishes once at once. At most one notification per user per
 * `minIntervalMs` (documented: 1/s); the excess is dropped, which is why a client also polls.
 * A watch lapses at its expiration (7 days) unless renewed.
 */
export interface WatchState {
  topicName: string;
  labelIds: string[];
  behavior: 'INCLUDE' | 'EXCLUDE';
  expiration: number;
}

export const watchLifetimeMs = 7 * 86_400_000;

export class GmailWatches {
  private readonly active = new Map<GmailMailbox, WatchState>();
  private readonly lastSent = new Map<GmailMailbox, number>();

  constructor(
    private readonly pubsub: PubSubEmulator,
    private readonly clock: { now(): number },
    private readonly minIntervalMs: number,
  ) {}

  attach(mb: GmailMailbox): void {
    mb.listeners.push((historyId, change) => this.onChange(mb, historyId, change));
  }

  start(mb: GmailMailbox, w: Omit<WatchState, 'expiration'>): WatchState {
    const state = { ...w, expiration: this.clock.now() + watchLifetimeMs };
    this.active.set(mb, state);
    this.publish(mb, state, mb.historyId, true);
    return state;
  }

  stop(mb: GmailMailbox): void {
    this.active.delete(mb);
  }

  get(mb: GmailMailbox): WatchState | undefined {
    return this.active.get(mb);
  }

  private onChange(mb: GmailMailbox, historyId: number, change: HistoryChange): void {
    const w = this.active.get(mb);
    if (!w) return;
    if (this.clock.now() >= w.expiration) {
      this.active.delete(mb);
      return;
    }
    const m = mb.messages.get(change.messageId);
    const labels = new Set([...(m?.labelIds ?? []), ...('labelIds' in change ? change.labelIds : [])]);
    const touches = w.labelIds.length === 0 || w.labelIds.some((l) => labels.has(l));
    if (w.behavior === 'INCLUDE' ? !touches : touches && w.labelIds.length > 0) return;
    this.publish(mb, w, historyId, false);
  }

  private publish(mb: GmailMailbox, w: WatchState, historyId: number, force: boolean): void {
    const now = this.clock.now();
    const last = this.lastSent.get(mb);
    if (!force && last !== undefined && now - last < this.minIntervalMs) return;
    this.lastSent.set(mb, now);
    this.pubsub.publish(w.topicName, { emailAddress: mb.address, historyId: String(historyId) });
  }
}

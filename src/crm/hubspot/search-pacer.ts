import type { Clock } from '../../common/clock.ts';

/**
 * HubSpot's search endpoints have their own limit per second (documented: 5 per second; Cadenza
 * plans for 4), apart from the burst limit the writer's token bucket keeps (CrmLimits). One
 * writeActivities call makes up to five searches, so the connector keeps this one itself.
 *
 * Searches run one at a time, and a search may start only when fewer than `perSecond` finished in
 * the last second. Counting from when each finished, not when it was sent, keeps the server's
 * count (it counts arrivals) within the limit whatever the network's delays: an earlier search
 * arrived before it finished, and a later one arrives after it is sent.
 */
export class SearchPacer {
  private finished: number[] = [];
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly clock: Clock,
    private readonly perSecond: number,
  ) {}

  run<T>(search: () => Promise<T>): Promise<T> {
    const turn = this.tail.then(async () => {
      await this.slot();
      try {
        return await search();
      } finally {
        this.finished.push(this.clock.now());
      }
    });
    // The next search waits for this one, whether it succeeded or not.
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  private async slot(): Promise<void> {
    for (;;) {
      const now = this.clock.now();
      this.finished = this.finished.filter((t) => t > now - 1000);
      if (this.finished.length < this.perSecond) return;
      await this.clock.sleep(this.finished[0]! + 1000 - now);
    }
  }
}

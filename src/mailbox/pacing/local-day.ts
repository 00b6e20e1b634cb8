/**
 * A zone's local days as intervals of instants, for counting "today" in the mailbox's (or the
 * workspace's) own zone, never the database server's.
 *
 * Local day d is [start(d), start(d+1)) where start(d) is local midnight of d, taken in the
 * calendar's 'boundary' mode: a midnight inside a spring-forward gap (zones that change at 00:00)
 * starts the day at the transition. The intervals partition time and follow each other in order,
 * so every instant belongs to exactly one local day, even where a fall-back at midnight makes the
 * wall clock go back into the previous date for an hour (that hour stays in the new day).
 */
import { DAY_MS, isoDateOfDay } from '../../calendar/civil.ts';
import { instantOfWall, wallOf, zoneState, type ZoneState } from '../../calendar/zone.ts';

export class LocalDays {
  readonly zone: ZoneState;
  private readonly starts = new Map<number, number>();
  // The last day looked up: the planner asks about the same day many times in a row.
  private lastDay = Number.NaN;
  private lastStart = 0;
  private lastEnd = 0;

  constructor(zone: string | ZoneState) {
    this.zone = typeof zone === 'string' ? zoneState(zone) : zone;
  }

  /** First instant of local day `day`. */
  start(day: number): number {
    let s = this.starts.get(day);
    if (s === undefined) {
      s = instantOfWall(this.zone, day * DAY_MS, 'boundary');
      if (this.starts.size > 4096) this.starts.clear();
      this.starts.set(day, s);
    }
    return s;
  }

  /** The local day (day number, 0 = 1970-01-01) that instant t belongs to. */
  dayOf(t: number): number {
    if (t >= this.lastStart && t < this.lastEnd) return this.lastDay;
    let d = Math.floor(wallOf(this.zone, t) / DAY_MS);
    if (t < this.start(d)) d--;
    else if (t >= this.start(d + 1)) d++;
    this.lastDay = d;
    this.lastStart = this.start(d);
    this.lastEnd = this.start(d + 1);
    return d;
  }

  /** Local wall time of t in ms (epoch ms as if the zone were UTC). */
  wall(t: number): number {
    return wallOf(this.zone, t);
  }

  /** The instant of a local wall time; a time in a spring-forward gap moves forward by the gap (as luxon does). */
  instant(wall: number): number {
    return instantOfWall(this.zone, wall, 'target');
  }

  iso(day: number): string {
    return isoDateOfDay(day);
  }
}

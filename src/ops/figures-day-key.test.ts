import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { seededRandom } from '../common/random.ts';
import { calendarWindow, dayKeyOf } from './figures.ts';

const DAY = 86_400_000;

/**
 * `dayKeyOf` (a binary search among the window's local midnights) puts every instant on the day
 * PostgreSQL's `at time zone` does, in zones with half- and quarter-hour offsets, daylight saving
 * at 2 a.m., at midnight (Havana, Santiago: the day then begins at 1 a.m.) and by half an hour
 * (Lord Howe), over windows that cross the changes.
 */
describe.each(testBackends())('the day of an instant in a window (%s)', (backend) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await freshStore(backend);
  });
  afterAll(() => store?.destroy());

  it('agrees with to_char(at time zone) for every instant of windows across daylight-saving changes', async () => {
    const random = seededRandom('day-key');
    const zones = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'America/Havana', 'America/Santiago', 'Pacific/Chatham'];
    const asOfs = [Date.UTC(2020, 3, 20), Date.UTC(2020, 10, 12), Date.UTC(2036, 2, 20), Date.UTC(2036, 9, 15)];
    for (const zone of zones) {
      for (const asOf of asOfs) {
        const w = calendarWindow(asOf, 45, zone);
        // The window's ends and random instants between, a few on the hour and the quarter.
        const at = [w.since.getTime(), w.until.getTime() - 1];
        for (let i = 0; i < 60; i++) {
          const t = w.since.getTime() + random.int(0, w.until.getTime() - w.since.getTime() - 1);
          at.push(i % 3 === 0 ? t - (t % (15 * 60_000)) : t);
        }
        const r = await sql<{ mine: string | null; theirs: string }>`
          select ${dayKeyOf(w, sql`x.at`)} as mine, to_char(x.at at time zone ${zone}, 'YYYY-MM-DD') as theirs
          from unnest(${at.map((t) => new Date(t).toISOString())}::timestamptz[]) as x(at)`.execute(store.db);
        for (const row of r.rows) expect(row.mine, zone).toBe(row.theirs);
        expect(new Set(r.rows.map((x) => x.mine)).size).toBeGreaterThan(20);
        // Outside the window: no day.
        const out = await sql<{ k: string | null }>`select ${dayKeyOf(w, sql`${new Date(w.since.getTime() - DAY)}::timestamptz`)} as k`.execute(store.db);
        expect(out.rows[0]!.k).toBeNull();
      }
    }
  });
});

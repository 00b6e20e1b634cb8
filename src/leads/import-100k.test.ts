import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../common/random.ts';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { importLeads, type ImportProgress } from './import.ts';

/**
 * 100,000 rows in one import, on the embedded store (the slower backend). Counts only: timings are
 * measured by .scratch-style scripts, not asserted, since test machines vary.
 */
const ROWS = 100_000;
const WS = '00000000-0000-7000-8000-000000001000';
const ZONES = ['America/New_York', 'Europe/Berlin', 'Asia/Tokyo', 'Not/AZone'];
const COUNTRIES = ['US', 'Germany', 'JP', 'United Kingdom'];

/** Row i's address: every 1000th is not an address; every 2500th repeats the row before it. */
function emailOf(i: number): string {
  if (i % 1000 === 0) return `person${i}-at-nowhere`;
  const k = i % 2500 === 0 ? i - 1 : i;
  return `person${k}@company${k % 5000}.example.com`;
}

/** Every 997th row's address is suppressed beforehand. */
function suppressedAddresses(): string[] {
  return Array.from({ length: Math.floor(ROWS / 997) }, (_, k) => emailOf((k + 1) * 997)).filter((e) => e.includes('@'));
}

describe('importLeads: 100k rows on pglite', () => {
  let store: TestStore;
  let dir: string;
  let path: string;

  beforeAll(async () => {
    store = await freshStore('pglite');
    await store.db.insertInto('workspace').values({ id: WS, name: 'big' }).execute();
    await store.db
      .insertInto('suppression')
      .values(suppressedAddresses().map((email_norm) => ({ workspace_id: WS, email_norm, reason: 'unsubscribe' as const })))
      .execute();

    dir = mkdtempSync(join(tmpdir(), 'cadenza-leads-100k-'));
    path = join(dir, 'leads.csv');
    const out = createWriteStream(path);
    out.write('Email,First Name,Last Name,Company,Job Title,Phone,Country,State,Time Zone,LinkedIn URL,Notes\r\n');
    let chunk = '';
    for (let i = 1; i <= ROWS; i++) {
      chunk += `${emailOf(i)},First${i},Last${i},"Company ${i % 5000}, Inc.",VP Sales,+1 555 010 ${String(i % 10000).padStart(4, '0')},${COUNTRIES[i % 4]},CA,${ZONES[i % 4]},https://linkedin.com/in/p${i},"note ${i}"\r\n`;
      if (i % 1000 === 0 || i === ROWS) {
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
      }
    }
    out.end();
    await once(out, 'finish');
  });
  afterAll(async () => {
    await store.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports them in one call, streaming, with every row accounted for', async () => {
    let last: ImportProgress | undefined;
    let calls = 0;
    const r = await importLeads(store, {
      workspaceId: WS,
      input: path,
      random: seededRandom('100k'),
      onProgress: (p) => {
        if (last) expect(p.rowsRead).toBeGreaterThanOrEqual(last.rowsRead);
        last = p;
        calls++;
      },
    });
    const want = model();
    expect(r).toMatchObject({ rowsRead: ROWS, imported: want.imported, rejected: ROWS - want.imported, warnings: want.warnings });
    expect(r.rejectsByReason).toEqual(want.rejects);
    expect(calls).toBe(ROWS / 1000 + 1);
    expect(last).toMatchObject({ rowsRead: ROWS, imported: r.imported, rejected: r.rejected });
    expect(last!.bytesRead).toBe(last!.totalBytes);
    const count = await sql<{ n: number }>`select count(*)::int as n from lead where workspace_id = ${WS}`.execute(store.db);
    expect(count.rows[0]!.n).toBe(want.imported);
  });
});

/** What the import must make of the generated file, by the rules written out plainly. */
function model() {
  const suppressed = new Set(suppressedAddresses());
  const seen = new Set<string>();
  const rejects: Record<string, number> = {};
  const add = (k: string) => (rejects[k] = (rejects[k] ?? 0) + 1);
  let imported = 0;
  let warnings = 0;
  for (let i = 1; i <= ROWS; i++) {
    const email = emailOf(i);
    if (!email.includes('@')) add('invalid_email');
    else if (seen.has(email)) add('duplicate_in_file');
    else {
      seen.add(email);
      if (suppressed.has(email)) add('suppressed');
      else {
        imported++;
        if (ZONES[i % 4] === 'Not/AZone') warnings++;
      }
    }
  }
  return { imported, warnings, rejects };
}

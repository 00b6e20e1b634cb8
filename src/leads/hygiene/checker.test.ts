import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock.ts';
import { nodeResolver } from '../../common/dns-resolver.ts';
import { newId } from '../../common/ids.ts';
import { seededRandom } from '../../common/random.ts';
import { applyDefinition } from '../../sequence/apply-definition.ts';
import { bulkEnroll } from '../../sequence/bulk-enroll.ts';
import { validateDefinition } from '../../sequence/definition.ts';
import { startTestDnsServer, type TestDnsServer } from '../../../test/dns-server.ts';
import { makeWorld } from '../../../test/fixtures/world.ts';
import { freshStore, testBackends, type TestStore } from '../../../test/stores.ts';
import { createImportJob, runImportJob, type ImportJobSpec } from '../import-job.ts';
import { decideReview, reviewQueue } from '../sql/hygiene.ts';
import { HygieneChecker } from './checker.ts';

/** The verdicts written on leads, enrollment skipping invalid and holding risky leads, and the import report's counts. */
describe.each(testBackends())('list hygiene on %s', (backend) => {
  let store: TestStore;
  let dns: TestDnsServer;
  let checker: HygieneChecker;
  let resolver: ReturnType<typeof nodeResolver>;
  const random = seededRandom('hygiene');
  const now = Date.now();

  beforeAll(async () => {
    [store, dns] = await Promise.all([freshStore(backend), startTestDnsServer()]);
    dns.setMx('mx.test', [{ exchange: 'mail.mx.test', priority: 10 }]);
    dns.setA('a-only.test', ['192.0.2.2']);
    dns.setMx('null-mx.test', [{ exchange: '.', priority: 0 }]);
    dns.setMx('slow.test', [{ exchange: 'mail.slow.test', priority: 10 }]);
    dns.delay('slow.test', 3000);
    resolver = nodeResolver({ server: dns.address, timeoutMs: 5000 });
    checker = new HygieneChecker(resolver, systemClock, { timeoutMs: 250 });
  });
  afterAll(async () => {
    resolver?.cancel();
    await Promise.all([store?.destroy(), dns?.close()]);
  });

  /** A workspace with one mailbox, an active sequence, and leads with these addresses. */
  async function setup(emails: string[]) {
    const w = await makeWorld(store, { leads: 0, mailboxes: 1, nowMs: now, random });
    const ids = emails.map(() => newId(now, random));
    if (emails.length) {
      await store.db
        .insertInto('lead')
        .values(emails.map((e, i) => ({ id: ids[i]!, workspace_id: w.workspaceId, email: e, email_norm: e.toLowerCase() })))
        .execute();
    }
    const def = validateDefinition({ key: 's', name: 'S', window: 'any', mailboxes: ['rep0@acme.test'], steps: [{ key: 'intro', type: 'email', subject: 'Hi', body: 'Hi' }] });
    const { sequenceId } = await applyDefinition(store, { clock: systemClock, random }, w.workspaceId, def);
    return { workspaceId: w.workspaceId, ids, sequenceId };
  }
  const leadRow = (id: string) => store.db.selectFrom('lead').select(['email', 'hygiene_verdict', 'hygiene_reasons', 'hygiene_review', 'hygiene_checked_at']).where('id', '=', id).executeTakeFirstOrThrow();

  it('writes a verdict with reasons on each lead; enrolling skips the invalid and holds the risky until approved', async () => {
    const emails = ['ana@mx.test', 'info@mx.test', 'bob@null-mx.test', 'carl@gone.test', 'dora@slow.test', 'eve@mailinator.com', 'fay@mx.test', 'gus@a-only.test'];
    const { workspaceId, ids, sequenceId } = await setup(emails);
    // fay hard-bounced before (tests seed the table directly; the product writes it only through suppress()).
    await store.db.insertInto('suppression').values({ workspace_id: workspaceId, email_norm: 'fay@mx.test', reason: 'hard_bounce', source: 'test' }).execute();

    const t = performance.now();
    const { counts } = await checker.checkLeads(store.db, workspaceId, ids);
    // slow.test's server does not answer: one timeout (250 ms), and the lead is risky, not invalid.
    expect(performance.now() - t).toBeLessThan(2500);
    expect(counts).toEqual({ valid: 2, risky: 2, invalid: 4 });
    const rows = await Promise.all(ids.map(leadRow));
    expect(rows.map((r) => [r.email, r.hygiene_verdict, r.hygiene_reasons.map((x) => x.code).join(',')])).toEqual([
      ['ana@mx.test', 'valid', ''],
      ['info@mx.test', 'risky', 'role_account'],
      ['bob@null-mx.test', 'invalid', 'null_mx'],
      ['carl@gone.test', 'invalid', 'no_such_domain'],
      ['dora@slow.test', 'risky', 'domain_unchecked'],
      ['eve@mailinator.com', 'invalid', 'disposable'],
      ['fay@mx.test', 'invalid', 'hard_bounce'],
      ['gus@a-only.test', 'valid', ''],
    ]);
    expect(rows.every((r) => r.hygiene_checked_at instanceof Date)).toBe(true);
    expect((await reviewQueue(store.db, workspaceId, undefined, 10)).map((r) => r.email).sort()).toEqual(['dora@slow.test', 'info@mx.test']);

    const deps = { clock: systemClock, random };
    const first = await bulkEnroll(store, deps, { workspaceId, sequenceId, leadIds: ids });
    expect(first.enrolled).toBe(2);
    expect({ invalid: first.invalid, held: first.held }).toEqual({ invalid: 3, held: 2 });
    const why = Object.fromEntries(first.refused.map((r) => [r.email, r.reason]));
    expect(why).toEqual({
      'info@mx.test': 'held_for_review',
      'bob@null-mx.test': 'invalid_address',
      'carl@gone.test': 'invalid_address',
      'dora@slow.test': 'held_for_review',
      'eve@mailinator.com': 'invalid_address',
      // Suppression is checked first: promise 6 says why.
      'fay@mx.test': 'suppressed',
    });

    // The review: info approved (enrollable), dora rejected (never enrolled); a valid lead is not reviewable.
    expect(await decideReview(store.db, workspaceId, [ids[1]!], 'approved', null, new Date())).toEqual([ids[1]]);
    expect(await decideReview(store.db, workspaceId, [ids[4]!, ids[0]!], 'rejected', null, new Date())).toEqual([ids[4]]);
    expect(await reviewQueue(store.db, workspaceId, undefined, 10)).toEqual([]);
    const second = await bulkEnroll(store, deps, { workspaceId, sequenceId, leadIds: [ids[1]!, ids[4]!] });
    expect(second.enrolled).toBe(1);
    expect(second.refused).toEqual([{ leadId: ids[4], email: 'dora@slow.test', reason: 'invalid_address', detail: expect.stringContaining('rejected on review') }]);

    // A new check keeps a decision while the lead stays risky; a lead that became valid loses it.
    dns.delay('slow.test', 0);
    const again = new HygieneChecker(resolver, systemClock, { timeoutMs: 1000 });
    await again.checkLeads(store.db, workspaceId, [ids[1]!, ids[4]!]);
    expect((await leadRow(ids[1]!)).hygiene_review).toBe('approved');
    expect(await leadRow(ids[4]!)).toMatchObject({ hygiene_verdict: 'valid', hygiene_review: null });
    dns.delay('slow.test', 3000);
  });

  it('before enrolling, leads never checked and leads whose DNS did not answer are checked (again)', async () => {
    dns.setMx('flaky.test', [{ exchange: 'mail.flaky.test', priority: 10 }]);
    dns.delay('flaky.test', 3000);
    const { workspaceId, ids } = await setup(['ann@flaky.test', 'ben@mx.test', 'info@mx.test']);
    await checker.checkLeads(store.db, workspaceId, ids.slice(0, 2));
    expect((await leadRow(ids[0]!)).hygiene_verdict).toBe('risky');
    dns.delay('flaky.test', 0);
    // A checker whose cache has not remembered the outage (another process, or a minute later).
    const fresh = new HygieneChecker(resolver, systemClock, { timeoutMs: 1000 });
    const r = await fresh.checkLeads(store.db, workspaceId, ids, { onlyDue: true });
    expect(r.rows.map((x) => [x.id, x.verdict])).toEqual(expect.arrayContaining([[ids[0], 'valid'], [ids[2], 'risky']]));
    expect(r.rows.map((x) => x.id)).not.toContain(ids[1]); // valid already: not asked again
  });

  it('leads of another workspace are neither checked nor decided', async () => {
    const a = await setup(['info@mx.test']);
    const b = await setup(['other@mx.test']);
    await checker.checkLeads(store.db, b.workspaceId, a.ids);
    expect((await leadRow(a.ids[0]!)).hygiene_verdict).toBeNull();
    await checker.checkLeads(store.db, a.workspaceId, a.ids);
    expect(await decideReview(store.db, b.workspaceId, a.ids, 'approved', null, new Date())).toEqual([]);
    expect((await leadRow(a.ids[0]!)).hygiene_review).toBeNull();
  });

  it('an import job counts its leads by verdict and enrolls only the valid ones', async () => {
    const { workspaceId, sequenceId } = await setup([]);
    const spec: ImportJobSpec = { workspaceId, createdBy: null, fileName: 'l.csv', mapping: {}, onDuplicate: 'skip', encoding: 'auto', totalBytes: null, enrollSequenceId: sequenceId };
    const deps = { store, clock: systemClock, random, hygiene: checker };
    const id = await createImportJob(deps, spec);
    const csv = 'email\nana@mx.test\nsales@mx.test\nx@null-mx.test\ny@gone.test\nz@a-only.test\nnot-an-address\n';
    expect(await runImportJob(deps, id, spec, Readable.from([Buffer.from(csv)]))).toEqual({ status: 'done' });
    const job = await store.db.selectFrom('lead_import').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    // The malformed address is a reject of the import itself (email.ts), as before.
    expect({ inserted: job.inserted, rejected: job.rejected }).toEqual({ inserted: 5, rejected: 1 });
    expect({ valid: job.hygiene_valid, risky: job.hygiene_risky, invalid: job.hygiene_invalid }).toEqual({ valid: 2, risky: 1, invalid: 2 });
    expect({ enrolled: job.enrolled, skipped: job.enroll_skipped, by: job.enroll_skipped_by_reason }).toEqual({ enrolled: 2, skipped: 3, by: { invalid_address: 2, held_for_review: 1 } });
  });
});

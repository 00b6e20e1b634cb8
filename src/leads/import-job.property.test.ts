/**
 * Whatever bytes an upload holds, the import job ends 'done' or refuses the file with
 * INVALID_INPUT (and says so in its row); it never crashes, and every row it read is accounted
 * for: inserted, updated, unchanged or rejected, with one report row per reject.
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, type TestStore } from '../../test/stores.ts';
import { systemClock } from '../common/clock.ts';
import { isCadenzaError } from '../common/errors.ts';
import { newId } from '../common/ids.ts';
import { seededRandom } from '../common/random.ts';
import { createImportJob, runImportJob, type ImportJobSpec } from './import-job.ts';

/** Bytes that matter to a CSV reader, so random files are often almost-CSV rather than noise. */
const CSV_BYTES = [...Buffer.from('email,first_name;\t|"\r\n a@b.c.test x@y.test sep=\\ ,,'), 0xef, 0xbb, 0xbf, 0xff, 0xfe, 0x80, 0xe9, 0xc3, 0x00];
const csvish = fc.array(fc.constantFrom(...CSV_BYTES), { maxLength: 400 }).map((a) => Uint8Array.from(a));
const headerThenNoise = fc
  .tuple(fc.constantFrom('email\n', 'email,first_name,company\n', 'Email;Name\r\n', '\ufeffemail\n', 'sep=;\nemail;x\n'), fc.oneof(csvish, fc.uint8Array({ maxLength: 400 })))
  .map(([h, rest]) => Buffer.concat([Buffer.from(h), rest]));
const anyFile = fc.oneof(fc.uint8Array({ maxLength: 400 }), csvish, headerThenNoise);

describe('import job on arbitrary bytes (pglite)', () => {
  let store: TestStore;
  let workspaceId: string;
  const random = seededRandom('import-fuzz');
  beforeAll(async () => {
    store = await freshStore('pglite');
    workspaceId = newId(Date.now(), random);
    await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Fuzz', time_zone: 'UTC' }).execute();
  });
  afterAll(() => store?.destroy());

  it('never crashes, and the counts add up', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyFile,
        fc.integer({ min: 1, max: 64 }),
        fc.constantFrom('skip' as const, 'update' as const),
        fc.constantFrom('auto' as const, 'utf-8' as const, 'windows-1252' as const),
        async (bytes, chunk, onDuplicate, encoding) => {
          const spec: ImportJobSpec = { workspaceId, createdBy: null, fileName: null, mapping: {}, onDuplicate, encoding, totalBytes: bytes.length };
          const deps = { store, clock: systemClock, random };
          const id = await createImportJob(deps, spec);
          const chunks: Buffer[] = [];
          for (let i = 0; i < bytes.length; i += chunk) chunks.push(Buffer.from(bytes.subarray(i, i + chunk)));
          let refused: unknown;
          try {
            await runImportJob(deps, id, spec, Readable.from(chunks));
          } catch (e) {
            refused = e;
          }
          const job = await store.db.selectFrom('lead_import').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
          if (refused !== undefined) {
            expect(isCadenzaError(refused, 'INVALID_INPUT'), String(refused)).toBe(true);
            expect(job.status).toBe('failed');
            expect(job.error).toBe((refused as Error).message);
            return;
          }
          expect(job.status).toBe('done');
          expect(job.inserted + job.updated + job.unchanged + job.rejected).toBe(job.rows_read);
          expect(Object.values(job.rejects_by_reason).reduce((a, n) => a + n, 0)).toBe(job.rejected);
          const reported = await store.db.selectFrom('lead_import_reject').select((eb) => eb.fn.countAll<number>().as('n')).where('import_id', '=', id).executeTakeFirstOrThrow();
          expect(Number(reported.n)).toBe(job.rejected);
        },
      ),
      { numRuns: 150, seed: 5150 },
    );
  }, 120_000);
});

/**
 * CSV lead import at scale: 100k generated rows (about 15 MB, 2% bad addresses, 1% repeated in the
 * file) streamed over a real socket to POST /api/workspaces/:id/leads/imports, as the web app sends
 * a file, on PostgreSQL and PGlite.
 *
 *   npm run bench -- lead-import [--backend=both|postgres|pglite] [--rows=100000] [--live=1]
 *
 * Figures per backend: rows/s over the whole request, the job's own count of inserted and rejected
 * rows, the process's peak RSS and peak JS heap + external above what it held before the upload
 * (sampled every 20 ms), and what stays allocated after a full GC once it has ended. The
 * client generates the file as it sends it, so the figure is the server's: the file is never held
 * whole on either side. With PGlite the database runs in this process, so its memory is in the RSS.
 * Peaks include garbage not yet collected; --live=1 also forces a full GC every 2 s mid-import and
 * reports the most that survived it (the in-file duplicate check keeps one entry per address).
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { systemClock } from '../src/common/clock.ts';
import { newId } from '../src/common/ids.ts';
import { seededRandom } from '../src/common/random.ts';
import { addMembership } from '../src/api/auth/accounts.ts';
import { hashPassword } from '../src/api/auth/passwords.ts';
import { createSession, SESSION_COOKIE } from '../src/api/auth/sessions.ts';
import { defaultAuthSettings } from '../src/api/context.ts';
import { buildServer } from '../src/api/server.ts';
import { bytes, round } from './lib/format.ts';
import { collect, usedBytes } from './lib/memory.ts';
import { benchStore, flag } from './support/backends.ts';

const HEADER = 'Email,First Name,Last Name,Company Name,Title,Phone,Country,City,Industry,LinkedIn URL\n';
const INDUSTRIES = ['Software', 'Manufacturing', 'Logistics', 'Retail', 'Healthcare', 'Financial Services'];
const COUNTRIES = ['United States', 'Germany', 'France', 'United Kingdom', 'Brazil', 'Japan'];

/** Row i of the file, the same on every call: 2% bad addresses, 1% repeats of an earlier row's address. */
function row(i: number): string {
  const email = i % 50 === 7 ? `not-an-address-${i}` : i % 100 === 13 ? `person${i - 10}@company${(i - 10) % 997}.example` : `person${i}@company${i % 997}.example`;
  return `${email},First${i},Last ${i},"Company ${i % 997}, Inc.",Head of Operations,+1 555 ${String(i % 10_000).padStart(4, '0')},${COUNTRIES[i % 6]},City ${i % 313},${INDUSTRIES[i % 6]},https://www.linkedin.com/in/person-${i}\n`;
}

function* file(rows: number): Generator<string> {
  yield HEADER;
  // A few hundred rows per chunk, as a socket would carry them.
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    chunk += row(i);
    if (chunk.length > 64 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

async function runOne(backend: 'postgres' | 'pglite', rows: number, live: boolean): Promise<Record<string, number>> {
  const { store, drop } = await benchStore(backend);
  try {
    const random = seededRandom('lead-import');
    const workspaceId = newId(Date.now(), random);
    const accountId = newId(Date.now(), random);
    await store.db.insertInto('workspace').values({ id: workspaceId, name: 'Bench', time_zone: 'UTC' }).execute();
    await store.db.insertInto('account').values({ id: accountId, email: 'owner@bench.test', name: 'Owner', password_hash: await hashPassword('bench password 1') }).execute();
    await addMembership(store.db, { clock: systemClock, random }, { accountId, workspaceId, email: 'owner@bench.test', name: 'Owner', role: 'owner' });
    const session = await createSession(store.db, accountId, systemClock, 3_600_000);
    const app = buildServer({ store, clock: systemClock, version: 'bench', api: { random, publicUrl: 'http://localhost', ...defaultAuthSettings } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      let size = 0;
      for (const c of file(rows)) size += Buffer.byteLength(c);
      const base = `/api/workspaces/${workspaceId}`;
      const headers = { cookie: `${SESSION_COOKIE}=${session.token}`, 'x-csrf-token': session.csrfToken, 'content-type': 'text/csv', 'content-length': String(size) };
      const importId = newId(Date.now(), random);

      collect();
      const rssBefore = process.memoryUsage.rss();
      const heapBefore = usedBytes();
      let rssPeak = rssBefore;
      let heapPeak = heapBefore;
      const sampler = setInterval(() => {
        rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
        heapPeak = Math.max(heapPeak, usedBytes());
      }, 20);
      let livePeak = 0;
      const progress = setInterval(() => {
        // --live: what is really held mid-import (full GCs every 2 s, which slow the run a little).
        if (live) {
          collect();
          livePeak = Math.max(livePeak, usedBytes() - heapBefore);
        }
        void app.inject({ method: 'GET', url: `${base}/leads/imports/${importId}`, headers: { cookie: headers.cookie } }).then((r) => {
          const j = r.json<{ percent: number | null; rowsRead: number; rejected: number; rowsPerSecond: number | null }>();
          if (r.statusCode === 200) console.log(`  ${backend}: ${j.percent ?? '?'}%, ${j.rowsRead} rows, ${j.rejected} rejected, ${j.rowsPerSecond ?? '?'} rows/s`);
        });
      }, 2000);
      const t0 = process.hrtime.bigint();
      const job = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method: 'POST', path: `${base}/leads/imports?importId=${importId}&fileName=bench.csv`, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text) as Record<string, unknown>) : reject(new Error(`${res.statusCode} ${text}`))));
        });
        req.on('error', reject);
        Readable.from(file(rows)).pipe(req);
      });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      clearInterval(sampler);
      clearInterval(progress);
      collect();
      const retained = usedBytes() - heapBefore;
      const rowsPerS = rows / (ms / 1000);
      console.log(
        `${backend}: ${rows} rows (${bytes(size)}) in ${round(ms / 1000, 2)} s = ${Math.round(rowsPerS)} rows/s; inserted ${String(job.inserted)}, rejected ${String(job.rejected)}; ` +
          `peak RSS ${bytes(rssPeak)} (+${bytes(rssPeak - rssBefore)} over ${bytes(rssBefore)} before); ` +
          `peak JS heap+external +${bytes(heapPeak - heapBefore)}, retained after GC ${bytes(retained)}` +
          (live ? `; live after GC mid-import at most +${bytes(livePeak)}` : ''),
      );
      if (job.rowsRead !== rows) throw new Error(`the job read ${String(job.rowsRead)} rows, not ${rows}`);
      return {
        [`${backend}_rows_per_s`]: Math.round(rowsPerS),
        [`${backend}_seconds`]: round(ms / 1000, 2),
        [`${backend}_inserted`]: Number(job.inserted),
        [`${backend}_rejected`]: Number(job.rejected),
        [`${backend}_peak_rss_bytes`]: rssPeak,
        [`${backend}_rss_growth_bytes`]: rssPeak - rssBefore,
        [`${backend}_peak_heap_growth_bytes`]: heapPeak - heapBefore,
        [`${backend}_retained_bytes`]: retained,
        ...(live ? { [`${backend}_live_peak_bytes`]: livePeak } : {}),
        file_bytes: size,
      };
    } finally {
      await app.close();
    }
  } finally {
    await drop();
  }
}

export default async function (args: string[]): Promise<Record<string, unknown>> {
  const which = flag(args, 'backend', 'both');
  const rows = Number(flag(args, 'rows', '100000'));
  const backends = which === 'both' ? (['postgres', 'pglite'] as const) : [which as 'postgres' | 'pglite'];
  let out: Record<string, unknown> = { rows };
  const live = flag(args, 'live', '0') === '1';
  for (const b of backends) out = { ...out, ...(await runOne(b, rows, live)) };
  return out;
}

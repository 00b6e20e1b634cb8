import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { SyncBatch } from '../../src/mailbox/sync/source.ts';
import { ingestBatch, type IngestDeps, type MailboxRef } from '../../src/ingest/pipeline.ts';

/**
 * Messages through the real pipeline while an HTTP server in this process answers /healthz every
 * 25 ms: how responsive the process stays (event-loop delay from perf_hooks, and the server's own
 * answers) and where every message ended. Shared by the hostile-ingest test and its benchmark.
 */
export interface Responsiveness {
  messages: number;
  seconds: number;
  messagesPerSecond: number;
  /** Event-loop delay, ms (monitorEventLoopDelay, 10 ms resolution). */
  p99Ms: number;
  maxMs: number;
  /** /healthz answers during the run, and the slowest, ms. A loop blocked throughout records no delay sample: these witness it. */
  answered: number;
  worstAnswerMs: number;
  stored: number;
  quarantined: number;
}

export async function ingestResponsively(deps: IngestDeps, mailbox: MailboxRef, corpus: Uint8Array[], o: { batchSize?: number; keyPrefix?: string } = {}): Promise<Responsiveness> {
  const batchSize = o.batchSize ?? 4;
  const server: Server = createServer((req, res) => {
    res.writeHead(req.url === '/healthz' ? 200 : 404, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  let probing = true;
  let answered = 0;
  let worst = 0;
  const probe = (async () => {
    while (probing) {
      const t0 = performance.now();
      const status = await get(port);
      if (status !== 200) throw new Error(`/healthz answered ${status}`);
      worst = Math.max(worst, performance.now() - t0);
      answered++;
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  delay.enable();
  const t0 = performance.now();
  let stored = 0;
  let quarantined = 0;
  try {
    for (let i = 0; i < corpus.length; i += batchSize) {
      const slice = corpus.slice(i, i + batchSize);
      const batch: SyncBatch = { messages: slice.map((raw, k) => ({ key: `${o.keyPrefix ?? 'INBOX:1:'}${i + k}`, folder: 'inbox', raw, threadId: null, receivedAt: Date.now() })), problems: [], cursor: { uid: i + slice.length }, mode: 'incremental' };
      const report = await ingestBatch(deps, mailbox, batch);
      stored += report.messages.filter((m) => m.inserted).length;
      quarantined += report.quarantined;
    }
  } finally {
    delay.disable();
    probing = false;
    await probe.catch(() => undefined);
    await new Promise((r) => server.close(r));
  }
  const seconds = (performance.now() - t0) / 1000;
  return {
    messages: corpus.length,
    seconds,
    messagesPerSecond: corpus.length / seconds,
    p99Ms: delay.percentile(99) / 1e6,
    maxMs: delay.max / 1e6,
    answered,
    worstAnswerMs: worst,
    stored,
    quarantined,
  };
}

function get(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

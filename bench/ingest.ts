/**
 * Ingestion throughput: how many inbound messages a second one process turns into durable signals.
 *
 *   npm run bench -- ingest [--replies=1000] [--batch=100] [--backends=pglite,postgres]
 *
 * Input: every mail of the corpora (../shared/corpora: bounces, auto-replies, ARF reports) and
 * `--replies` generated replies, each answering one of as many sends recorded beforehand (so each
 * reply threads, acts and stops an enrollment, the expensive path). Two figures:
 *
 *   cpu:   parse (parseMailSafe) + new text + classify (the ladder, no LLM), in memory
 *   store: the whole pipeline (ingestBatch): the CPU stages, then threading, the decision, the
 *          inbound rows, the engine events and the cursor in one transaction per batch
 *
 * The mail comes from memory, not from a server: the IMAP connector is measured by imap-idle.
 */
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../src/common/clock.ts';
import { seededRandom } from '../src/common/random.ts';
import { defaultIngestSteps } from '../src/ingest/pipeline-steps.ts';
import { ingestBatch } from '../src/ingest/pipeline.ts';
import { replyMail, seedSentSequence } from '../src/ingest/pipeline-test-support.ts';
import type { FetchedMessage } from '../src/mailbox/sync/source.ts';
import { Metrics } from '../src/ops/metrics.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { flag, intFlag } from './lib/args.ts';
import { int, round } from './lib/format.ts';
import { benchStore } from './support/backends.ts';

const here = dirname(fileURLToPath(import.meta.url));
const corpora = resolve(here, '..', '..', 'shared', 'corpora');

function corpusMail(): Uint8Array[] {
  if (!existsSync(corpora)) {
    console.log(`corpora not found (../shared/corpora): generated replies only`);
    return [];
  }
  const out: Uint8Array[] = [];
  const walk = (dir: string) => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.eml')) out.push(new Uint8Array(readFileSync(p)));
    }
  };
  for (const set of ['sisimai', 'bounceparser', 'autoreply-ext', 'replyparse']) if (existsSync(join(corpora, set))) walk(join(corpora, set));
  return out;
}

export default async function ingest(args: string[]): Promise<Record<string, unknown>> {
  const replies = intFlag(args, 'replies', 1000);
  const batchSize = intFlag(args, 'batch', 100);
  const backends = (flag(args, 'backends') ?? 'pglite,postgres').split(',').filter((b): b is 'pglite' | 'postgres' => b === 'pglite' || b === 'postgres');
  const corpus = corpusMail();
  const steps = defaultIngestSteps();
  const figures: Record<string, unknown> = { corpus_messages: corpus.length, replies, batch: batchSize };

  // CPU only, over the corpora and as many generated replies.
  const sample = [...corpus, ...Array.from({ length: replies }, (_, i) => new TextEncoder().encode(replyMail({ from: `p${i}@acme.test`, to: 'rep@cadenza.test', inReplyTo: `<s${i}@cadenza.test>`, subject: 'Re: Quick question', body: `Thanks, let's talk.\n\nOn Monday, rep wrote:\n> Hi ${i}`, messageId: `<g${i}@acme.test>` })))];
  for (let warm = 0; warm < 2; warm++) {
    const t0 = performance.now();
    let parsed = 0;
    for (const raw of sample) {
      const r = await steps.parse(raw);
      if (!r.ok) continue;
      parsed++;
      await steps.classify(r.mail, steps.newText(r.mail));
    }
    const ms = performance.now() - t0;
    if (warm === 1) {
      figures.cpu_msgs_per_s = Math.round((sample.length / ms) * 1000);
      figures.cpu_us_per_msg = round((ms * 1000) / sample.length);
      console.log(`cpu (parse + new text + classify): ${int(sample.length)} messages (${parsed} parsed) in ${round(ms)} ms: ${int((sample.length / ms) * 1000)} msg/s`);
    }
  }

  for (const backend of backends) {
    const b = await benchStore(backend);
    try {
      const random = seededRandom(`bench-ingest-${backend}`);
      const service = new EnrollmentService({ store: b.store, clock: systemClock, random });
      const seedStart = performance.now();
      const leads = Array.from({ length: replies }, (_, i) => `p${i}@acme${i % 50}.test`);
      const s = await seedSentSequence(b.store, { clock: systemClock, random, service }, { mailboxEmail: 'rep@cadenza.test', leads, tag: 'bench' });
      console.log(`${backend}: seeded ${int(s.sends.length)} sent enrollments in ${round((performance.now() - seedStart) / 1000)} s`);
      const messages: FetchedMessage[] = corpus.map((raw, i) => ({ key: `INBOX:1:c${i}`, folder: 'inbox', raw, threadId: null, receivedAt: Date.now() }));
      s.sends.forEach((x, i) =>
        messages.push({
          key: `INBOX:1:r${i}`,
          folder: 'inbox',
          raw: new TextEncoder().encode(replyMail({ from: x.leadEmail, to: 'rep@cadenza.test', inReplyTo: x.messageId, subject: `Re: ${x.subject}`, body: `Thanks, let's talk.\n\nOn Monday, rep wrote:\n> Hi`, messageId: `<r${i}@bench.test>` })),
          threadId: null,
          receivedAt: Date.now(),
        }),
      );
      // Interleave corpus mail and replies as a real inbox would.
      messages.sort((a, b2) => (a.key < b2.key ? -1 : 1));
      const metrics = new Metrics();
      const deps = { store: b.store, service, clock: systemClock, random, steps, metrics };
      const t0 = performance.now();
      let acted = 0;
      for (let i = 0; i < messages.length; i += batchSize) {
        const r = await ingestBatch(deps, { id: s.mailboxId, workspaceId: s.workspaceId }, { messages: messages.slice(i, i + batchSize), problems: [], cursor: { n: i }, mode: 'incremental' });
        acted += r.messages.filter((m) => m.action !== 'inbox' && m.action !== 'own').length;
      }
      const ms = performance.now() - t0;
      const rate = Math.round((messages.length / ms) * 1000);
      figures[`${backend}_msgs_per_s`] = rate;
      figures[`${backend}_acted`] = acted;
      console.log(`${backend}: pipeline (cpu + thread + act + store), ${int(messages.length)} messages in batches of ${batchSize}: ${round(ms)} ms, ${int(rate)} msg/s; ${int(acted)} acted on an enrollment`);
    } finally {
      await b.drop();
    }
  }
  return figures;
}

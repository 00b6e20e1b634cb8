/**
 * The claim-and-send loop of one sender process: claim (outbox, with its re-checks), compose,
 * last look, SMTP hand-over to a local sink, record sent + message + step_sent, one message at a
 * time, as MailboxSender does. The sink is an in-process SMTP server on loopback that accepts
 * everything, so the figure is Cadenza's own cost, database writes included.
 *   npm run bench -- claim-send [--n=1000] [--mailboxes=4] [--backends=postgres,pglite]
 * Several mailboxes run concurrently in the one process, as the sender pool does.
 */
import { randomBytes } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { systemClock } from '../src/common/clock.ts';
import { newId } from '../src/common/ids.ts';
import { seededRandom } from '../src/common/random.ts';
import { applyDefinition } from '../src/sequence/apply-definition.ts';
import { bulkEnroll } from '../src/sequence/bulk-enroll.ts';
import { validateDefinition } from '../src/sequence/definition.ts';
import { EnrollmentService } from '../src/sequence/enrollment-service.ts';
import { trackingKey } from '../src/sending/compose/tracking.ts';
import { MailboxSender } from '../src/sending/mailbox-sender.ts';
import { createSmtpTransport } from '../src/mailbox/connectors/smtp-imap/smtp-transport.ts';
import { benchStore, flag } from './support/backends.ts';

export default async function claimSendBench(args: string[]): Promise<Record<string, unknown>> {
  const n = Number(flag(args, 'n', '1000'));
  const mailboxes = Number(flag(args, 'mailboxes', '4'));
  const backends = flag(args, 'backends', 'postgres,pglite').split(',') as Array<'pglite' | 'postgres'>;
  let received = 0;
  const sink = new SMTPServer({ disableReverseLookup: true, allowInsecureAuth: true, authMethods: ['PLAIN', 'LOGIN'], disabledCommands: ['STARTTLS'], logger: false, onAuth(_a, _s, cb) { cb(null, { user: 'rep' }); }, onData(stream, _s, cb) { stream.on('data', () => undefined); stream.on('end', () => { received++; cb(); }); } });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const port = (sink.server.address() as { port: number }).port;
  const figures: Record<string, unknown> = { messages: n, mailboxes };
  try {
    for (const backend of backends) {
      const b = await benchStore(backend);
      try {
        const clock = systemClock;
        const random = seededRandom(9);
        const now = clock.now();
        const ws = newId(now, random);
        await b.store.db.insertInto('workspace').values({ id: ws, name: 'Bench', time_zone: 'UTC' }).execute();
        const mbIds: string[] = [];
        for (let m = 0; m < mailboxes; m++) {
          const id = newId(now, random);
          mbIds.push(id);
          await b.store.db.insertInto('mailbox').values({ id, workspace_id: ws, email: `rep${m}@bench.test`, provider: 'smtp_imap', time_zone: 'UTC' }).execute();
        }
        const leads = Array.from({ length: n }, (_, i) => ({ id: newId(now, random), workspace_id: ws, email: `lead${i}@sink.test`, email_norm: `lead${i}@sink.test`, first_name: `Lead${i}`, company: 'Co', time_zone: 'UTC' }));
        for (let i = 0; i < n; i += 1000) await b.store.db.insertInto('lead').values(leads.slice(i, i + 1000)).execute();
        const def = validateDefinition({ key: 'b', name: 'B', window: 'any', holidays: false, jitter_minutes: 0, mailboxes: mbIds.map((_, m) => `rep${m}@bench.test`), steps: [{ key: 'intro', type: 'email', subject: 'Hello {{first_name}}', body: 'Hi {{first_name}}, a word about {{company}}.\n' }, { key: 'bump', type: 'email', delay: '3 days', body: 'Bump' }] });
        const seq = await applyDefinition(b.store, { clock, random }, ws, def);
        await bulkEnroll(b.store, { clock, random }, { workspaceId: ws, sequenceId: seq.sequenceId, leadIds: leads.map((l) => l.id) });
        const service = new EnrollmentService({ store: b.store, clock, random });
        while ((await service.fireDue(500)).length) {
          /* every first step is due now */
        }
        const key = trackingKey(randomBytes(32));
        // Time spent inside the SMTP exchange, to tell Cadenza's own cost from the sink's.
        let transportNs = 0n;
        const timed = (t: ReturnType<typeof createSmtpTransport>): ReturnType<typeof createSmtpTransport> => ({
          kind: t.kind,
          sentProof: t.sentProof,
          async send(raw, env, ctx) {
            const a = process.hrtime.bigint();
            try {
              return await t.send(raw, env, ctx);
            } finally {
              transportNs += process.hrtime.bigint() - a;
            }
          },
          findSent: (id, o) => t.findSent(id, o),
          recentMailFrom: (q) => t.recentMailFrom(q),
          close: () => t.close(),
        });
        const senders = mbIds.map((id, m) => new MailboxSender(id, {
          store: b.store, service, clock, random,
          transport: timed(createSmtpTransport({ smtp: { host: '127.0.0.1', port, security: 'none', allowSelfSigned: false }, imap: null, username: `rep${m}@bench.test`, auth: { kind: 'password', password: 'x' }, serverSavesSent: true }, { clock })),
          trackingKey: key, publicUrl: 'https://cadenza.bench.test', pauseMailbox: async () => undefined,
        }));
        received = 0;
        const t0 = process.hrtime.bigint();
        const sent = await Promise.all(senders.map(async (s) => {
          let k = 0;
          for (;;) {
            const r = await s.step();
            if (r.kind === 'idle') return k;
            if (r.kind !== 'sent') throw new Error(`unexpected ${r.kind}`);
            k++;
          }
        }));
        const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
        const total = sent.reduce((a, x) => a + x, 0);
        if (total !== n || received !== n) throw new Error(`sent ${total}, sink received ${received}, expected ${n}`);
        const smtpMs = Number(transportNs) / 1e6 / n;
        const loopMs = (seconds * mailboxes * 1000) / n;
        console.log(`${backend.padEnd(8)} ${n} messages through ${mailboxes} mailbox loops in ${seconds.toFixed(2)} s: ${Math.round(n / seconds)} sends/s per process; per send in a loop ${loopMs.toFixed(1)} ms, of which SMTP exchange ${smtpMs.toFixed(1)} ms and claim + compose + record ${(loopMs - smtpMs).toFixed(1)} ms`);
        figures[`${backend}_loop_ms_per_send`] = Math.round(loopMs * 10) / 10;
        figures[`${backend}_smtp_ms_per_send`] = Math.round(smtpMs * 10) / 10;
        figures[`${backend}_pipeline_ms_per_send`] = Math.round((loopMs - smtpMs) * 10) / 10;
        figures[`${backend}_sends_per_s`] = Math.round(n / seconds);
        figures[`${backend}_ms_per_send`] = Math.round((seconds / n) * 10000) / 10;
      } finally {
        await b.drop();
      }
    }
  } finally {
    await new Promise<void>((r) => sink.close(() => r()));
  }
  return figures;
}

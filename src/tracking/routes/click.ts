import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RequestFacts, TrackingRecorder } from '../recorder.ts';
import { openToken } from '../tokens.ts';
import { facts, sendNotFound, tokenParams, type TokenRequest } from './common.ts';

/**
 * GET /t/c/<token> — the click redirect. The destination is inside the sealed token, never in the
 * URL, so only links we sealed can be followed: there is no open redirect. A bad token answers a
 * 404 page; only http and https destinations are followed. HEAD (link checkers) gets the same
 * answer without a body and is recorded as such, for the classifier.
 */
export function clickRoute(scope: FastifyInstance, ctx: { key: Buffer; recorder: TrackingRecorder }): void {
  const runs = new UnsealRuns((c) => {
    // openToken checked the destination (http or https) and gave it back normalised, header-safe.
    const t = openToken(ctx.key, c.token, 'c');
    if (!t) {
      sendNotFound(c.reply);
      return;
    }
    // Answered once the click's batch has committed (or the database failed or was slow: the
    // redirect never waits long for it, batch-writer.ts).
    void ctx.recorder.recordClick(t, c.facts).then(() => c.reply.code(302).headers({ location: t.u, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).send());
  });
  scope.get('/t/c/*', { schema: { params: tokenParams } }, (req: TokenRequest, reply) => {
    runs.add({ token: req.params['*'], facts: facts(req), reply });
  });
}

interface PendingClick {
  token: string;
  facts: RequestFacts;
  reply: FastifyReply;
}

/**
 * Click tokens are opened in runs, after the requests that arrived together have been parsed,
 * rather than one in the middle of each request's handling: measured under load, an unseal (an
 * AES-GCM context set up, used once and freed) costs about 20 µs of CPU between HTTP parsing and
 * writing, and about 6 µs in a run of them, where OpenSSL's state stays in cache. The wait is one
 * turn of the event loop (setImmediate: a phase of the loop, not a timer, so nothing here depends
 * on the clock).
 */
class UnsealRuns {
  private pending: PendingClick[] = [];

  constructor(private readonly answer: (c: PendingClick) => void) {}

  add(c: PendingClick): void {
    this.pending.push(c);
    if (this.pending.length === 1) setImmediate(() => this.drain());
  }

  private drain(): void {
    const run = this.pending;
    this.pending = [];
    for (const c of run) {
      try {
        this.answer(c);
      } catch (e) {
        // The scope's error handler answers; one bad request never strands the rest of the run.
        c.reply.send(e);
      }
    }
  }
}

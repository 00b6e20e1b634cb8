import type { FastifyError, FastifyInstance } from 'fastify';
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/logger.ts';
import type { EnrollmentService } from '../sequence/enrollment-service.ts';
import type { Store } from '../store/store.ts';
import { errorPage, notFoundPage, pageHeaders } from './pages.ts';
import { TrackingRecorder, type RecorderOptions } from './recorder.ts';
import { clickRoute } from './routes/click.ts';
import { pixelRoute } from './routes/pixel.ts';
import { unsubscribeRoutes } from './routes/unsubscribe.ts';

export interface TrackingDeps {
  store: Store;
  service: EnrollmentService;
  clock: Clock;
  /** trackingKey(masterKey): the key every tracking token is sealed with. */
  key: Buffer;
  log?: Logger;
  /** Batching of opens and clicks (defaults in batch-writer.ts). */
  batch?: RecorderOptions;
  /** A recorder of the caller's (it then closes it); by default one is made and closed with the server. */
  recorder?: TrackingRecorder;
  /**
   * A directory of this process's own for the click journal (click-journal.ts): a click is then
   * answered once it is on local disk, and written to the database behind. Opened (and what a
   * previous process left replayed) when the server is ready. Without it, a click is answered once
   * its batch has committed to the database.
   */
  journalDir?: string;
}

/** Far above an RFC 8058 body (26 bytes) or our form's; anything larger is not an unsubscribe. */
const BODY_LIMIT = 16 * 1024;

/**
 * The tracking routes (routes/, one file per endpoint), in their own Fastify scope so that their
 * body parsing and error pages stay theirs. They answer for any Host: a workspace's custom tracking
 * domain is a CNAME to this server. Returns the recorder (for its stats, and for tests to flush).
 */
export function registerTracking(app: FastifyInstance, deps: TrackingDeps): TrackingRecorder {
  const recorder = deps.recorder ?? new TrackingRecorder({ store: deps.store, clock: deps.clock, key: deps.key, ...(deps.log ? { log: deps.log } : {}), ...(deps.batch ? { batch: deps.batch } : {}) });
  if (!deps.recorder) app.addHook('onClose', async () => recorder.close());
  const journalDir = deps.journalDir;
  if (journalDir !== undefined) {
    app.addHook('onReady', async () => {
      await recorder.openJournal(journalDir);
    });
  }

  void app.register(async (scope) => {
    // One-click POSTs come urlencoded or multipart, and a confused client may send anything: take
    // every body as text, bounded, and let the handler read what it needs. Nothing here parses JSON.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_req, body, done) => done(null, body));

    scope.setErrorHandler((err: FastifyError, req, reply) => {
      // A path that is not a token is a link that does not exist.
      if (err.validation) return reply.code(404).headers(pageHeaders).send(notFoundPage());
      const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
      if (status === 500) deps.log?.error({ err, url: req.url.slice(0, 200), method: req.method }, 'tracking request failed');
      return reply.code(status).headers(pageHeaders).send(status === 404 ? notFoundPage() : errorPage());
    });

    pixelRoute(scope, { recorder });
    clickRoute(scope, { key: deps.key, recorder });
    unsubscribeRoutes(scope, { store: deps.store, service: deps.service, clock: deps.clock, key: deps.key });
  });
  return recorder;
}

import type { FastifyInstance } from 'fastify';
import type { TrackingRecorder } from '../recorder.ts';
import { facts, gifParams, type TokenRequest } from './common.ts';

/** The smallest transparent 1×1 GIF (GIF89a, one transparent pixel): 43 bytes. */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

const pixelHeaders = {
  'content-type': 'image/gif',
  'content-length': String(PIXEL_GIF.length),
  // Every open must reach us: no browser, proxy or HTTP/1.0 cache may keep the image.
  'cache-control': 'no-store, no-cache, must-revalidate, private, max-age=0',
  pragma: 'no-cache',
  expires: '0',
  'x-content-type-options': 'nosniff',
};

/**
 * GET /t/o/<token>.gif — the open pixel. Always answers the GIF, even for a bad token: a broken image
 * in a message would show the recipient that something is being tracked, and tells a prober
 * nothing. Only a genuine token is recorded (checked when its batch is written), and recording
 * never waits for the database.
 */
export function pixelRoute(scope: FastifyInstance, ctx: { recorder: TrackingRecorder }): void {
  scope.get('/t/o/*', { schema: { params: gifParams }, attachValidation: true }, (req: TokenRequest, reply) => {
    // Token-shaped (the schema said so): queued still sealed, opened with its batch (recorder.ts).
    if (!req.validationError) ctx.recorder.recordOpen(req.params['*'].slice(0, -4), facts(req));
    reply.headers(pixelHeaders).send(PIXEL_GIF);
  });
}

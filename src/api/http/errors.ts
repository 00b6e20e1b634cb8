import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isCadenzaError, type ErrorCode } from '../../common/errors.ts';
import { loggedCause } from './logged-cause.ts';

/** The one error shape every API route answers with. */
export const errorBody = z
  .object({
    error: z.object({
      code: z.string().describe('A stable code: one of src/common/errors.ts, or INTERNAL'),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof errorBody>;

/**
 * Each domain error code's HTTP status: the only place codes become statuses. A Record, so a new
 * code cannot be added without deciding its status here.
 */
export const statusForCode: Record<ErrorCode, number> = {
  INVALID_INPUT: 400,
  UNKNOWN_TIME_ZONE: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  SUPPRESSED: 409,
  ALREADY_ENROLLED: 409,
  INVALID_TRANSITION: 409,
  TEMPLATE_FAILS_FOR_ALL: 409,
  OUTSIDE_CALLING_HOURS: 409,
  NOT_DIALLABLE: 422,
  MAILBOX_AUTH_FAILED: 422,
  CRM_AUTH_FAILED: 422,
  MAIL_MALFORMED: 422,
  MAILBOX_FOLDER_NOT_FOUND: 422,
  SEND_REJECTED: 422,
  RATE_LIMITED: 429,
  MIGRATION_FAILED: 500,
  CONFIG_INVALID: 500,
  MAILBOX_UNAVAILABLE: 502,
  SEND_UNCONFIRMED: 502,
  STORE_UNAVAILABLE: 503,
  WORKER_POOL_CLOSED: 503,
  SENDER_UNAVAILABLE: 503,
  ROLE_KEEPS_CRASHING: 500,
  BACKUP_FAILED: 500,
  RECORDING_INVALID: 422,
  CAPTURE_INVALID: 422,
  TRANSCRIPTION_MODEL_INVALID: 500,
};

/** Statuses Fastify itself raises before a handler runs (bad JSON, wrong media type, body too large). */
const codeForFrameworkStatus: Record<number, string> = {
  400: 'INVALID_INPUT',
  404: 'NOT_FOUND',
  405: 'INVALID_INPUT',
  406: 'INVALID_INPUT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

export interface MappedError {
  status: number;
  body: ErrorBody;
  /** Logged server-side only: the 5xx cause, never sent. */
  internal?: unknown;
}

/**
 * Any error thrown while answering a request, as a status and the public body. A 5xx says only
 * that something went wrong and its request id: messages of unexpected errors may carry a
 * connection string, a path or a secret, and stacks help only attackers.
 */
export function mapError(err: unknown, requestId: string): MappedError {
  if (hasZodFastifySchemaValidationErrors(err)) {
    const where = (err as FastifyError).validationContext ?? 'input';
    const issues = err.validation.map((v) => {
      const path = [where, ...v.instancePath.split('/').filter(Boolean)].join('.');
      return { path, message: v.message ?? 'invalid' };
    });
    const first = issues[0];
    return {
      status: 400,
      body: { error: { code: 'INVALID_INPUT', message: first ? `${first.path}: ${first.message}` : 'invalid input', details: { issues } } },
    };
  }
  if (isCadenzaError(err)) {
    const status = statusForCode[err.code];
    // A 5xx about a mail server the person's own request talked to (a reply the server did not
    // take, or may not have) is said as the domain composed it: what happened and whether sending
    // again is safe. Opted into per error (userFacing, sending/reply.ts), never by code.
    if (status < 500 || (err as { userFacing?: boolean }).userFacing === true) return { status, body: { error: { code: err.code, message: err.message, details: err.details } } };
    return { status, body: internalBody(err.code, requestId), internal: err };
  }
  const fe = err as Partial<FastifyError>;
  const st = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (st >= 400 && st < 500) {
    return { status: st, body: { error: { code: codeForFrameworkStatus[st] ?? 'INVALID_INPUT', message: fe.message ?? 'bad request', details: {} } } };
  }
  return { status: 500, body: internalBody('INTERNAL', requestId), internal: err };
}

function internalBody(code: string, requestId: string): ErrorBody {
  return { error: { code, message: 'The server could not complete the request; it is logged under the request id.', details: { requestId } } };
}

export function apiErrorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const m = mapError(err, String(req.id));
  if (m.internal !== undefined) {
    req.log.error({ err: m.internal, reqId: req.id, method: req.method, url: req.url.split('?', 1)[0] }, 'api request failed');
    loggedCause.add(req);
  }
  return reply.code(m.status).type('application/json').send(JSON.stringify(m.body));
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { cadenzaError } from '../../common/errors.ts';
import { authenticate, checkCsrf, checkKeyScope, workspaceAccess, type Principal, type Role, type WorkspaceAccess } from '../auth/access.ts';
import type { ApiContext } from '../context.ts';
import { errorBody } from './errors.ts';
import { validatorCompiler } from './validation.ts';

/**
 * Who may call a route: anyone; any signed-in person (session only: these routes are about the
 * person, not a workspace); or a member of the workspace in the URL with at least this role.
 */
export type Access = 'public' | 'account' | { workspace: Role };

/**
 * Ids of one workspace's objects, by the URL parameter name that takes them (mailboxId, leadId…).
 * The authorization test fills it with another workspace's objects and calls every route with it.
 */
export type ExampleIds = Record<string, string>;

export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: FastifyRequest;
  reply: FastifyReply;
  ctx: ApiContext;
  principal: Principal | undefined;
  /** The caller's access to the URL's workspace (workspace routes only). */
  ws: WorkspaceAccess;
}

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  tags: string[];
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  /** The success status (default 200). */
  status?: 200 | 201 | 202;
  /**
   * A valid input for this route given a workspace's object ids: required for routes with a body,
   * so the cross-workspace test is refused by authorization and not by validation.
   */
  example?: (ids: ExampleIds) => { body?: NoInfer<z.input<B>>; query?: NoInfer<z.input<Q>> };
  /** Requests allowed per client IP per window (@fastify/rate-limit), e.g. for sign-in. */
  rateLimit?: (ctx: ApiContext) => RateLimit;
  /**
   * The body is a file, not JSON: the handler gets it unread as `body` (an AsyncIterable of
   * Buffers that throws past maxBytes), so a large upload is never held whole. Not with `body`.
   */
  rawBody?: RawBody;
  handler: (c: RouteContext<z.output<P>, z.output<Q>, z.output<B>>) => Promise<z.output<R>>;
}

export interface RateLimit {
  max: number;
  windowMs: number;
  /** Requests exempt from the count, decided once the body is parsed (sign-in: a known device of the account). */
  allow?: (req: FastifyRequest) => Promise<boolean>;
}

export interface RawBody {
  contentType: string;
  maxBytes: number;
  /** What the body is, for the OpenAPI document. */
  description: string;
}

/** A route with its types erased, as the registry holds it. */
export interface ApiRoute {
  method: RouteSpec<z.ZodType, z.ZodType, z.ZodType, z.ZodType>['method'];
  url: string;
  summary: string;
  tags: string[];
  access: Access;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  response: z.ZodType;
  status: number;
  example?: (ids: ExampleIds) => { body?: unknown; query?: unknown };
  rateLimit?: (ctx: ApiContext) => RateLimit;
  rawBody?: RawBody;
  handler: (c: RouteContext<unknown, unknown, unknown>) => Promise<unknown>;
}

export function defineRoute<P extends z.ZodType = z.ZodType<unknown>, Q extends z.ZodType = z.ZodType<unknown>, B extends z.ZodType = z.ZodType<unknown>, R extends z.ZodType = z.ZodType>(
  spec: RouteSpec<P, Q, B, R>,
): ApiRoute {
  if (typeof spec.access === 'object' && !spec.url.startsWith('/api/workspaces/:workspaceId')) {
    throw new Error(`${spec.method} ${spec.url}: a workspace route lives under /api/workspaces/:workspaceId`);
  }
  if (spec.body && !spec.example) throw new Error(`${spec.method} ${spec.url}: a route with a body needs an example`);
  if (spec.body && spec.rawBody) throw new Error(`${spec.method} ${spec.url}: a route takes a JSON body or a raw one, not both`);
  return { ...spec, status: spec.status ?? 200 } as unknown as ApiRoute;
}

/** Path parameters of a workspace route: the workspace and any of its objects. */
export function workspaceParams<S extends z.ZodRawShape>(shape: S) {
  return z.object({ workspaceId: z.uuid(), ...shape });
}

const errorStatuses = [400, 401, 403, 404, 409, 429, 500] as const;
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const authState = new WeakMap<FastifyRequest, { principal: Principal | undefined; ws?: WorkspaceAccess }>();

/** Registers a route: schemas for OpenAPI and validation, authentication and authorization before anything else runs. */
export function registerRoute(app: FastifyInstance, route: ApiRoute, ctx: ApiContext): void {
  const response: Record<number, z.ZodType> = { [route.status]: route.response };
  for (const s of errorStatuses) response[s] = errorBody;
  const raw = route.rawBody;
  // The payload stream itself is the body; reading it (and its limit) is up to the handler.
  if (raw && !app.hasContentTypeParser(raw.contentType)) app.addContentTypeParser(raw.contentType, (_req, payload, done) => done(null, payload));
  app.route({
    method: route.method,
    url: route.url,
    ...(raw
      ? {
          bodyLimit: raw.maxBytes,
          // The body schema below only documents the content type; a stream has nothing to validate.
          validatorCompiler: (s: { httpPart?: string; schema: unknown }) =>
            s.httpPart === 'body' ? (data: unknown) => ({ value: data }) : validatorCompiler(s as Parameters<typeof validatorCompiler>[0]),
        }
      : {}),
    ...(route.rateLimit ? { config: { rateLimit: rateLimitConfig(route.rateLimit(ctx)) } } : {}),
    schema: {
      summary: route.summary,
      tags: route.tags,
      ...(route.access === 'public' ? { security: [] } : {}),
      ...(route.params ? { params: route.params } : {}),
      ...(route.query ? { querystring: route.query } : {}),
      ...(route.body ? { body: route.body } : {}),
      ...(raw ? { body: z.string().describe(raw.description), consumes: [raw.contentType] } : {}),
      response,
    },
    // onRequest runs before the body is read or validated: a caller without access learns nothing
    // about the route's input rules, and a refused call costs no parsing.
    onRequest: async (req) => {
      // Public routes (setup, sign-in) need no caller, and a stale key or cookie must not block them.
      if (route.access === 'public') {
        authState.set(req, { principal: undefined });
        return;
      }
      const principal = await authenticate(req, ctx);
      if (!principal) throw cadenzaError('UNAUTHENTICATED', 'sign in, or send an API key as Authorization: Bearer cdz_…');
      if (route.access === 'account' && principal.kind !== 'session') throw cadenzaError('FORBIDDEN', 'this route is for a signed-in person, not an API key');
      checkCsrf(req, principal);
      checkKeyScope(req, principal);
      if (route.access === 'account') {
        authState.set(req, { principal });
        return;
      }
      const workspaceId = (req.params as { workspaceId?: string }).workspaceId ?? '';
      authState.set(req, { principal, ws: await workspaceAccess(ctx, principal, workspaceId, route.access.workspace) });
    },
    handler: async (req, reply) => {
      const state = authState.get(req);
      const upload = raw ? rawUpload(req, reply, raw) : undefined;
      const c: RouteContext<unknown, unknown, unknown> = {
        params: req.params,
        query: req.query,
        body: upload ? upload.body : req.body,
        req,
        reply,
        ctx,
        principal: state?.principal,
        get ws(): WorkspaceAccess {
          if (!state?.ws) throw new Error(`${route.method} ${route.url} is not a workspace route`);
          return state.ws;
        },
      };
      const out = await route.handler(c);
      reply.code(route.status);
      return out;
    },
  });
}

/**
 * A raw request body, read in chunks up to a limit. A handler that stops early (an error, a
 * cancelled import) is answered at once: what is left of the body is the server's to bound and
 * close (http/unread-body.ts). Past the route's limit, the connection is closed instead of reading on.
 */
function rawUpload(req: FastifyRequest, reply: FastifyReply, raw: RawBody): { body: AsyncIterable<Buffer> } {
  const max = raw.maxBytes;
  const tooLarge = () => {
    reply.header('connection', 'close');
    return Object.assign(new Error(`the body is larger than the ${Math.round(max / (1024 * 1024))} MB this route takes`), { statusCode: 413 });
  };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) throw tooLarge();
  const stream = req.body as Readable | undefined;
  if (!stream || typeof stream.iterator !== 'function') {
    throw cadenzaError('INVALID_INPUT', `send the file as the request body with Content-Type: ${raw.contentType}`, { contentType: req.headers['content-type'] ?? null });
  }
  let seen = 0;
  async function* body(): AsyncGenerator<Buffer> {
    for await (const c of stream!.iterator({ destroyOnReturn: false })) {
      const b = Buffer.isBuffer(c) ? c : Buffer.from(c as string);
      seen += b.length;
      if (seen > max) throw tooLarge();
      yield b;
    }
  }
  return { body: body() };
}

function rateLimitConfig(l: RateLimit) {
  return {
    max: l.max,
    timeWindow: l.windowMs,
    // An exemption reads the body, so the count is taken after parsing, not on the request's arrival.
    ...(l.allow ? { hook: 'preHandler' as const, allowList: (req: FastifyRequest) => l.allow!(req) } : {}),
    // Thrown, so the one error handler answers it in the usual shape.
    errorResponseBuilder: (_req: FastifyRequest, c: { after: string }) => cadenzaError('RATE_LIMITED', `too many requests; try again in ${c.after}`),
  };
}

export function isUnsafe(method: string): boolean {
  return UNSAFE.has(method);
}

import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { cadenzaError } from '../common/errors.ts';
import type { ApiContext } from './context.ts';
import { apiErrorHandler } from './http/errors.ts';
import { registerRoute, type ApiRoute } from './http/route.ts';
import { validatorCompiler } from './http/validation.ts';
import { apiRoutes } from './routes/index.ts';

/**
 * The /api routes in their own Fastify scope: zod validation and serialisation, cookies, the rate
 * limiter and the one error handler apply here and leave the tracking and health routes alone.
 */
export function registerApi(app: FastifyInstance, ctx: ApiContext, routes: readonly ApiRoute[] = apiRoutes): void {
  void app.register(async (api) => {
    api.setValidatorCompiler(validatorCompiler);
    api.setSerializerCompiler(serializerCompiler);
    api.setErrorHandler(apiErrorHandler);
    api.setNotFoundHandler((req) => {
      throw cadenzaError('NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`);
    });
    await api.register(cookie);
    await api.register(rateLimit, { global: false });
    for (const r of routes) registerRoute(api, r, ctx);
  });
}

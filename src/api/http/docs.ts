import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { $ZodType } from 'zod/v4/core';

type TransformArg = Parameters<typeof jsonSchemaTransform>[0];

/** /api routes declare zod schemas; the tracking and health routes plain JSON Schema or none. */
function usesZod(schema: TransformArg['schema'] | undefined): boolean {
  if (!schema) return false;
  const s = schema as Record<string, unknown>;
  const parts = [s.params, s.querystring, s.body, ...Object.values((s.response ?? {}) as Record<string, unknown>)];
  return parts.some((p) => p instanceof $ZodType);
}

/**
 * The OpenAPI document at /openapi.json, built from the routes' own schemas, and a browsable page
 * at /docs (Swagger UI, served from the npm package's files: nothing is fetched from elsewhere).
 */
export function registerDocs(app: FastifyInstance, version: string): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Cadenza API',
        version,
        description: 'Sign in with POST /api/auth/login (session cookie + x-csrf-token on unsafe calls) or send a workspace API key as `Authorization: Bearer cdz_…`. Errors: `{ "error": { "code", "message", "details" } }`. See docs/api.md.',
      },
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: 'cadenza_session' },
          apiKey: { type: 'http', scheme: 'bearer', description: 'A workspace API key, cdz_…' },
        },
      },
      security: [{ session: [] }, { apiKey: [] }],
    },
    transform: (doc) => (usesZod(doc.schema) ? jsonSchemaTransform(doc) : { schema: doc.schema, url: doc.url }),
    // The schemas named with .meta({ id }) (Enrollment, Sequence, Error…) are $refs in the paths: this writes them into components.
    transformObject: jsonSchemaTransformObject,
  });
  void app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

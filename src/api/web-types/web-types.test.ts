import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apiRoutes } from '../routes/index.ts';
import { defineRoute } from '../http/route.ts';
import { GENERATED_FILE, generateApiTypes } from './generate.ts';
import { tsType } from './json-schema-ts.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describe('the web app’s API types', () => {
  // CI runs `npm test`: a schema changed without its types fails the build here.
  it(`${GENERATED_FILE} is what the route registry's schemas make`, () => {
    const committed = readFileSync(join(root, GENERATED_FILE), 'utf8');
    const fresh = generateApiTypes(apiRoutes);
    if (committed !== fresh) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const at = a.findIndex((line, i) => line !== b[i]);
      expect.fail(
        `${GENERATED_FILE} is out of date with the API's zod schemas: run \`npm run gen:api-types\` and commit it ` +
          `(then \`npm run typecheck\` shows what the web app must follow). First difference at line ${at + 1}:\n` +
          `  committed: ${a[at] ?? '(end of file)'}\n  generated: ${b[at] ?? '(end of file)'}`,
      );
    }
  });

  it('names every route by method and path, with the input and output sides of its schemas', () => {
    const route = defineRoute({
      method: 'POST',
      url: '/api/workspaces/:workspaceId/things',
      summary: 'Make a thing',
      tags: ['x'],
      access: { workspace: 'admin' },
      body: z.object({ name: z.string(), size: z.number().int().default(1) }),
      example: () => ({ body: { name: 'a' } }),
      status: 201,
      response: z.object({ id: z.uuid(), size: z.number().int().default(1), tags: z.array(z.enum(['a', 'b'])).describe('Labels') }).meta({ id: 'ThingForTest' }),
      handler: async () => ({ id: '0198c2a4-61f0-7a11-8b2e-93c0d4e5f601', size: 1, tags: [] }),
    });
    const text = generateApiTypes([route]);
    expect(text).toContain('export type ThingForTest = {\n  id: string;\n  size: number;\n  /** Labels */\n  tags: ("a" | "b")[];\n};');
    expect(text).toContain('  /** Make a thing (access: admin of the workspace) */\n  "POST /api/workspaces/:workspaceId/things": {\n    params: Record<string, never>;\n    query: Record<string, never>;\n    body: {\n      name: string;\n      size?: number;\n    };\n    response: ThingForTest;\n    status: 201;\n  };');
  });

  it('refuses a name with two shapes rather than guess', () => {
    const Shape = z.object({ size: z.number().default(1) }).meta({ id: 'TwoShapesForTest' });
    const route = defineRoute({ method: 'PUT', url: '/api/x', summary: 's', tags: [], access: 'public', body: Shape, example: () => ({ body: {} }), response: Shape, handler: async () => ({ size: 1 }) });
    expect(() => generateApiTypes([route])).toThrow(/TwoShapesForTest.*another shape/);
  });
});

describe('JSON Schema to TypeScript', () => {
  const ref = { ref: (p: string) => p.replace('#/$defs/', '') };
  const t = (s: z.ZodType, io: 'input' | 'output' = 'output') => {
    const { $defs: _d, $schema: _s, ...rest } = z.toJSONSchema(s, { io }) as Record<string, unknown>;
    return tsType(rest, ref);
  };

  it('writes nullables, unions, literals, records, tuples and arrays of unions', () => {
    expect(t(z.string().nullable())).toBe('string | null');
    expect(t(z.union([z.literal('a'), z.number()]))).toBe('"a" | number');
    expect(t(z.record(z.string(), z.number()))).toBe('Record<string, number>');
    expect(t(z.tuple([z.number(), z.string()]))).toBe('[number, string]');
    expect(t(z.array(z.union([z.string(), z.null()])))).toBe('(string | null)[]');
    expect(t(z.array(z.object({ a: z.string() })))).toBe('{\n  a: string;\n}[]');
    expect(t(z.unknown())).toBe('unknown');
    expect(t(z.object({ 'odd-name': z.boolean().optional() }))).toBe('{\n  "odd-name"?: boolean;\n}');
    expect(tsType({ allOf: [{ $ref: '#/$defs/A' }, { anyOf: [{ type: 'string' }, { type: 'null' }] }] }, ref)).toBe('A & (string | null)');
  });

  it('fails on a keyword that would change the type, rather than write unknown', () => {
    expect(() => tsType({ type: 'object', patternProperties: { '^x': { type: 'string' } } }, ref)).toThrow(/patternProperties/);
  });
});

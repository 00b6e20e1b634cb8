import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler as zodValidatorCompiler } from 'fastify-type-provider-zod';
import { cadenzaError } from '../../common/errors.ts';

/**
 * The checks every API input passes before its route's own schema, in one place, so that no route
 * can forget them:
 * - text holds no NUL and no other control character but tab, line feed and carriage return
 *   (a NUL is refused by PostgreSQL mid-transaction, answered as a 500; the others hide text in
 *   logs, CSV exports and mail headers);
 * - a number is finite and a safe integer in size (±2^53): a JSON `99999999999999999999` parses to
 *   1e20, which no column, date or counter of Cadenza can hold.
 * The 400 names the field (`body.steps.0.subject`), like a schema refusal.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

export interface InputProblem {
  path: string;
  message: string;
}

/** The first problem in a parsed input, or undefined. Walks objects and arrays (JSON: no cycles). */
export function findInputProblem(value: unknown, path: string): InputProblem | undefined {
  if (typeof value === 'string') {
    const m = CONTROL.exec(value);
    if (m) return { path, message: `holds the control character U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}, which is not allowed in text` };
    return undefined;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) return { path, message: `${String(value)} is out of range` };
    return undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = findInputProblem(value[i], `${path}.${i}`);
      if (p) return p;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const keyProblem = findInputProblem(k, `${path}.${k}`);
      if (keyProblem) return { path: keyProblem.path, message: `the name of this field ${keyProblem.message}` };
      const p = findInputProblem(v, `${path}.${k}`);
      if (p) return p;
    }
  }
  return undefined;
}

/** Where Fastify's part names become the paths the API's errors use (http/errors.ts). */
const partName: Record<string, string> = { body: 'body', querystring: 'querystring', params: 'params', headers: 'headers' };

/** The zod validator (fastify-type-provider-zod), after the checks above; headers are not walked. */
export const validatorCompiler: FastifySchemaCompiler<unknown> = (route) => {
  const zod = zodValidatorCompiler(route as Parameters<typeof zodValidatorCompiler>[0]);
  const part = partName[route.httpPart ?? ''] ?? 'input';
  return (data: unknown) => {
    if (part !== 'headers') {
      const p = findInputProblem(data, part);
      if (p) return { error: cadenzaError('INVALID_INPUT', `${p.path}: ${p.message}`, { issues: [p] }) };
    }
    return zod(data);
  };
};

import { isCadenzaError, type ErrorCode } from '../common/errors.ts';

const exitCodes: Partial<Record<ErrorCode, number>> = { INVALID_INPUT: 2, CONFIG_INVALID: 2, NOT_FOUND: 3, CONFLICT: 4 };

/** Errors end the command with a clear message and a stable exit code, never a stack trace. */
export function reportError(e: unknown, json: boolean): number {
  if (isCadenzaError(e)) {
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: e.code, message: e.message, details: e.details } }, null, 2)}\n`);
    else process.stderr.write(`error: ${e.message}\n`);
    return exitCodes[e.code] ?? 1;
  }
  const msg = e instanceof Error ? e.message : String(e);
  if (json) process.stdout.write(`${JSON.stringify({ error: { code: 'INTERNAL', message: msg } }, null, 2)}\n`);
  else process.stderr.write(`error: ${msg}\n${process.env.CADENZA_DEBUG && e instanceof Error ? `${e.stack}\n` : ''}`);
  return 1;
}

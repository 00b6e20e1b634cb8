import { pino, type Logger } from 'pino';

/**
 * One logger for the process. Credentials never reach it: the redact list names every field that
 * may carry one (promise 7), so a careless `log.info({ mailbox })` cannot leak a password.
 */
export const redactPaths = [
  'password',
  '*.password',
  'accessToken',
  '*.accessToken',
  'refreshToken',
  '*.refreshToken',
  'secret',
  '*.secret',
  'credentials',
  '*.credentials',
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
];

export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: opts.name ?? 'cadenza',
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: redactPaths, censor: '[redacted]' },
  });
}

export type { Logger };

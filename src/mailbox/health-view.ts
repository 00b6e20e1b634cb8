import { verificationOf } from './verification.ts';

/**
 * A mailbox's health as shown to people (issue 11: a mailbox whose host could not be reached was
 * shown "ok" while nothing left it). The stored verdict (a pause for bounces or refused
 * credentials, a warning for the bounce rate) comes first; a mailbox stored as healthy shows what
 * fails now: sending (the latest transient failure no send has succeeded after), reading its
 * inbox (the sync's last error), or a connection test that failed. A mailbox added with its test
 * skipped keeps its health and says "not verified" beside it (the API's `verification`). Pure.
 */
export interface HealthFacts {
  health: 'ok' | 'warning' | 'paused' | 'error';
  healthReason: string | null;
  settings: unknown;
  syncError: string | null;
  sendError: string | null;
}

export function mailboxHealth(f: HealthFacts): { health: HealthFacts['health']; reason: string | null } {
  if (f.health !== 'ok') return { health: f.health, reason: f.healthReason };
  if (f.sendError) return { health: 'error', reason: `Sending fails: ${f.sendError.replace(/^transient:\s*/, '')}. Check the SMTP host, port and password, then Test.` };
  if (f.syncError) return { health: 'warning', reason: `Reading the inbox fails: ${f.syncError}. Replies are not seen, so sequences do not stop on them, until this is fixed.` };
  const v = verificationOf(f.settings);
  if (v?.state === 'failed') return { health: 'warning', reason: `The last connection test failed: ${v.problem ?? 'see Test'}` };
  return { health: 'ok', reason: null };
}

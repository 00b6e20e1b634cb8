import type { Clock } from '../../common/clock.ts';
import { backoffDelay, type BackoffPolicy } from '../../common/backoff.ts';
import type { Random } from '../../common/random.ts';
import type { SystemMailer, SystemMessage } from '../system-mailer.ts';
import type { Store } from '../../store/store.ts';
import { KIND_LABELS, NOTIFICATION_KINDS } from './kinds.ts';
import { claimDigest, digestFailed, digestItems, digestSent, waitingDigests, type DigestItem } from './sql/digest.ts';

/**
 * The email digest (issue 19): for each member with notifications waiting for mail (they chose
 * email for those kinds), one message through the system mailer, sent `everyHours` after the
 * oldest it holds, so events gather into one mail; nothing waiting, nothing sent. A failed send
 * keeps the items waiting and tries again after a jittered backoff (1 min doubling to 1 h); one
 * member's failure never holds another's digest. Runs in the API role (members' addresses).
 */
export const DIGEST_EVERY_MS = 60_000;
export const digestBackoff: BackoffPolicy = { baseMs: 60_000, capMs: 3_600_000 };
const LEASE_MS = 10 * 60_000;

export interface DigestDeps {
  store: Store;
  clock: Clock;
  random: Random;
  mailer: SystemMailer;
  /** The app's public URL, for the links. */
  appUrl?: string;
}

export interface DigestResult {
  sent: Array<{ userId: string; items: number }>;
  failed: Array<{ userId: string; error: string }>;
}

/** When a member's digest is due: `everyHours` after the oldest waiting item, or the retry's time if later. */
export function digestDueAt(w: { everyHours: number; nextAt: Date | null; oldestPending: Date }): number {
  return Math.max(w.oldestPending.getTime() + w.everyHours * 3_600_000, w.nextAt?.getTime() ?? Number.NEGATIVE_INFINITY);
}

export async function sendDueDigests(d: DigestDeps): Promise<DigestResult> {
  const out: DigestResult = { sent: [], failed: [] };
  const now = d.clock.now();
  for (const w of await waitingDigests(d.store.db)) {
    if (digestDueAt(w) > now) continue;
    if (!(await claimDigest(d.store.db, w.workspaceId, w.userId, new Date(now), new Date(now + LEASE_MS)))) continue;
    const items = await digestItems(d.store.db, w.workspaceId, w.userId);
    try {
      await d.mailer.send(digestMessage(w.email, w.workspaceName, items, d.appUrl));
      await digestSent(d.store.db, w.workspaceId, w.userId, items.map((i) => i.id), new Date(d.clock.now()));
      out.sent.push({ userId: w.userId, items: items.length });
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      await digestFailed(d.store.db, w.workspaceId, w.userId, error, (attempts) => new Date(d.clock.now() + backoffDelay(attempts - 1, d.random, digestBackoff)));
      out.failed.push({ userId: w.userId, error });
    }
  }
  return out;
}

/** The digest's text: the items grouped by kind, oldest first, each with its time and link. */
export function digestMessage(to: string, workspaceName: string, items: readonly DigestItem[], appUrl?: string): SystemMessage {
  const lines = [`What happened in ${workspaceName} since your last digest:`, ''];
  for (const kind of NOTIFICATION_KINDS) {
    const of = items.filter((i) => i.kind === kind);
    if (!of.length) continue;
    lines.push(`${KIND_LABELS[kind]} (${of.length})`);
    for (const i of of) lines.push(`- ${i.title}: ${i.body} (${i.occurredAt.toISOString().slice(0, 16).replace('T', ' ')} UTC)${appUrl ? ` ${appUrl.replace(/\/$/, '')}${i.link}` : ''}`);
    lines.push('');
  }
  lines.push('You receive this digest because you chose email for these notifications in Settings > Notifications.');
  return { to, subject: `Cadenza: ${items.length} notification${items.length === 1 ? '' : 's'} in ${workspaceName}`, text: lines.join('\n') };
}

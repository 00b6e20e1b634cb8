import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/logger.ts';
import { runEvery, type Periodic } from '../../common/periodic.ts';
import type { Random } from '../../common/random.ts';
import type { SecretSealer } from '../webhooks/secrets.ts';
import type { SystemMailer } from '../system-mailer.ts';
import type { Store } from '../../store/store.ts';
import { DIGEST_EVERY_MS, sendDueDigests } from './digest.ts';
import { fanOut } from './fanout.ts';
import { NOTIFICATION_PURGE_EVERY_MS, purgeNotifications } from './purge.ts';
import { deliverSlack } from './slack.ts';

/**
 * The API role's notification duties (src/app/app.ts): every few seconds, hand new events out
 * (fanout.ts) and post what is due to Slack (slack.ts); every minute, send the digests that are due
 * (digest.ts, with a system mailer only); every 6 hours, remove what is past its retention
 * (purge.ts). Each duty's failure is logged and the next round comes.
 */
export interface NotificationDutyDeps {
  store: Store;
  clock: Clock;
  random: Random;
  sealer: SecretSealer;
  log: Logger;
  allowPrivate: boolean;
  mailer?: SystemMailer;
  appUrl?: string;
  /** How often events are handed out and Slack posts sent (default 5 s). */
  everyMs?: number;
}

export function startNotificationDuties(d: NotificationDutyDeps): Periodic {
  const fast = runEvery(
    d.clock,
    d.everyMs ?? 5_000,
    async () => {
      while ((await fanOut(d)) > 0);
      const r = await deliverSlack({ store: d.store, clock: d.clock, random: d.random, sealer: d.sealer, log: d.log, allowPrivate: d.allowPrivate, ...(d.appUrl ? { appUrl: d.appUrl } : {}) });
      if (r.delivered || r.failed) d.log.info(r, 'slack notifications');
    },
    (e) => d.log.error({ err: e }, 'notification fan-out failed'),
  );
  const mailer = d.mailer;
  const digests = mailer
    ? runEvery(
        d.clock,
        DIGEST_EVERY_MS,
        async () => {
          const r = await sendDueDigests({ store: d.store, clock: d.clock, random: d.random, mailer, ...(d.appUrl ? { appUrl: d.appUrl } : {}) });
          if (r.sent.length || r.failed.length) d.log.info({ sent: r.sent.length, failed: r.failed }, 'notification digests');
        },
        (e) => d.log.error({ err: e }, 'notification digests failed'),
      )
    : undefined;
  const purge = runEvery(
    d.clock,
    NOTIFICATION_PURGE_EVERY_MS,
    async () => {
      const r = await purgeNotifications(d);
      if (r.read || r.events) d.log.info(r, 'notifications past their retention purged');
    },
    (e) => d.log.error({ err: e }, 'notification purge failed'),
  );
  return { stop: async () => void (await Promise.all([fast.stop(), digests?.stop(), purge.stop()])) };
}

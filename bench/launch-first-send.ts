/**
 * Launch → first send: how long after a script enrolls a lead over the HTTP API the first email is
 * sent and lands in the prospect's mailbox, against the real app and the mail bed (Postfix +
 * Dovecot on loopback). Setups: every role in one process on PGlite; the same on PostgreSQL; and on
 * PostgreSQL with the API in one app and the scheduler, sender and sync roles in another (the work
 * nudge crosses over LISTEN/NOTIFY). Each run is a fresh installation (the scenario is
 * test/launch-first-send.ts): a mailbox connected and leased, one lead, a one-step sequence with no
 * delay or jitter; the launch comes right after the scheduler's periodic refill, the worst moment
 * for polling. With --just-connected=1 the mailbox is connected moments before the launch instead
 * (no sender or sync loop holds it yet), and the prospect's reply is timed into the new mailbox's
 * sync loop (until the reply stops the enrollment).
 *
 *   npm run bench -- launch-first-send [--runs=5] [--setups=pglite,postgres,postgres-split] [--just-connected=1] [--rep=sync16@inbox.test] [--prospect=sync17@inbox.test] [--password=pass]
 *
 * Figures per setup (median and max over the runs): the enroll call's answer, the slot the day
 * planner gave, the send request 'sent', and the message in the prospect's INBOX (IMAP, polled).
 */
import { launchFirstSend, type LaunchFigures } from '../test/launch-first-send.ts';
import { resetMailBed, startMailBed } from '../test/mail/mailbed.ts';
import { round } from './lib/format.ts';
import { median } from './lib/stats.ts';
import { benchStore, flag } from './support/backends.ts';

type Setup = 'pglite' | 'postgres' | 'postgres-split';

export default async function (args: string[]): Promise<Record<string, unknown>> {
  const runs = Number(flag(args, 'runs', '5'));
  const setups = flag(args, 'setups', 'pglite,postgres,postgres-split').split(',') as Setup[];
  const rep = flag(args, 'rep', 'sync16@inbox.test');
  const prospect = flag(args, 'prospect', 'sync17@inbox.test');
  const password = flag(args, 'password', 'pass');
  const justConnected = flag(args, 'just-connected', '0') === '1';
  await startMailBed();
  await resetMailBed([rep, prospect]);
  console.log(`launch → first send: ${runs} runs per setup, ${rep} → ${prospect}${justConnected ? ', mailbox connected just before' : ''}`);

  const figures: Record<string, unknown> = { runs, just_connected: justConnected };
  for (const setup of setups) {
    const all: LaunchFigures[] = [];
    for (let i = 0; i < runs; i++) {
      const b = setup === 'pglite' ? undefined : await benchStore('postgres');
      try {
        const f = await launchFirstSend({ rep, prospect, password, ...(justConnected ? { justConnected, reply: true } : {}), ...(b ? { databaseUrl: b.url!, split: setup === 'postgres-split' } : {}) });
        all.push(f);
        console.log(`${setup.padEnd(15)} run ${i + 1}: enroll answered ${ms(f.enrollMs)}, slot ${ms(f.plannedMs)}, sent ${ms(f.sentMs)}, in the INBOX ${ms(f.deliveredMs)}${f.replyIngestedMs !== undefined ? `, reply read ${ms(f.replyIngestedMs)}` : ''}`);
      } finally {
        await b?.drop();
      }
    }
    const key = setup.replace('-', '_');
    for (const [name, pick] of [['enroll', (f: LaunchFigures) => f.enrollMs], ['sent', (f: LaunchFigures) => f.sentMs], ['delivered', (f: LaunchFigures) => f.deliveredMs], ...(justConnected ? [['reply', (f: LaunchFigures) => f.replyIngestedMs!] as const] : [])] as const) {
      const xs = all.map(pick);
      figures[`${key}_${name}_p50_ms`] = round(median(xs), 0);
      figures[`${key}_${name}_max_ms`] = round(Math.max(...xs), 0);
    }
    console.log(`${setup.padEnd(15)} median: sent ${ms(figures[`${key}_sent_p50_ms`] as number)}, in the INBOX ${ms(figures[`${key}_delivered_p50_ms`] as number)} (max ${ms(figures[`${key}_delivered_max_ms`] as number)})`);
  }
  return figures;
}

function ms(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${Math.round(x)} ms`;
}

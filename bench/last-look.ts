/**
 * The cost of the mailbox last look (src/sending/mailbox-last-look.ts) over IMAP, on the bed's real
 * Dovecot: SmtpTransport.recentMailFrom, which asks INBOX and Junk at once, each on its own warm
 * connection parked in its folder (NOOP + UID SEARCH, and a FETCH when something matched).
 *
 *   npm run bench -- last-look [--looks=300] [--cold=30]
 *
 * Figures (milliseconds, median and the p10–p90 spread):
 *   - anchor: one IMAP NOOP round trip on a warm connection, measured in the same run: the floor of
 *     any question to this server now, so that the ratio says what the look costs in round trips
 *     whatever the machine's load;
 *   - miss: the look when the lead has not written (the common case);
 *   - hit: the look when one message from the lead is there (the FETCH added);
 *   - cold: the same look on a fresh connection each time (connect, LOGIN, EXAMINE …, LOGOUT):
 *     what the warm connections save;
 *   - load: the 1-minute load average before and after (the machine is shared).
 */
import { loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import { systemClock } from '../src/common/clock.ts';
import { withImap } from '../src/mailbox/imap/connect.ts';
import { searchRecentMail } from '../src/mailbox/imap/search-recent-mail.ts';
import { WarmImap } from '../src/mailbox/imap/warm-connection.ts';
import { createSmtpTransport } from '../src/mailbox/connectors/smtp-imap/smtp-transport.ts';
import { bedEndpoint, mailBed, startMailBed } from '../test/mail/mailbed.ts';
import { intFlag } from './lib/args.ts';
import { round } from './lib/format.ts';
import { percentile } from './lib/stats.ts';

const USER = 'sync55@inbox.test';
const PASS = 'pass';

async function timeMs(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - a) / 1e6);
  }
  return out;
}

const summary = (xs: number[]) => ({ p50: round(percentile(xs, 50), 3), p10: round(percentile(xs, 10), 3), p90: round(percentile(xs, 90), 3) });

export default async function lastLook(args: string[]): Promise<Record<string, unknown>> {
  const looks = intFlag(args, 'looks', 300);
  const coldN = intFlag(args, 'cold', 30);
  await startMailBed();
  const loadBefore = loadavg()[0]!;
  const tag = randomBytes(4).toString('hex');
  const lead = `lead-${tag}@prospects.test`;
  const since = Date.now() - 60_000;
  // One message from the lead, delivered by LMTP (in the mailbox once the 250 came).
  const lmtp = nodemailer.createTransport({ host: mailBed.host, port: 10024, lmtp: true, secure: false, ignoreTLS: true } as Parameters<typeof nodemailer.createTransport>[0]);
  await lmtp.sendMail({ envelope: { from: lead, to: [USER] }, raw: `From: ${lead}\r\nTo: ${USER}\r\nSubject: bench ${tag}\r\nMessage-ID: <bench-${tag}@prospects.test>\r\n\r\nhello\r\n` });
  lmtp.close();

  const account = { endpoint: bedEndpoint('imap'), username: USER, auth: { kind: 'password' as const, password: PASS } };
  const anchorConn = new WarmImap(account, { clock: systemClock });
  await anchorConn.run((c) => c.noop());
  const transport = createSmtpTransport({ smtp: bedEndpoint('smtp', 'none'), imap: bedEndpoint('imap'), username: USER, auth: { kind: 'password', password: PASS }, serverSavesSent: true }, { clock: systemClock });
  const miss = { from: `nobody-${tag}@prospects.test`, threadedOn: [`<step-${tag}@inbox.test>`], since };
  const hit = { from: lead, threadedOn: [`<step-${tag}@inbox.test>`], since };
  const first = await transport.recentMailFrom(hit);
  if (first.status !== 'ok' || first.messages.length !== 1) throw new Error(`the look did not find the lead's message: ${JSON.stringify(first)}`);
  await transport.recentMailFrom(miss);

  // Interleaved rounds, so that a change of load touches every series alike.
  const anchor: number[] = [];
  const misses: number[] = [];
  const hits: number[] = [];
  for (let r = 0; r < looks; r += 50) {
    const n = Math.min(50, looks - r);
    anchor.push(...(await timeMs(n, () => anchorConn.run((c) => c.noop()))));
    misses.push(...(await timeMs(n, () => transport.recentMailFrom(miss))));
    hits.push(...(await timeMs(n, () => transport.recentMailFrom(hit))));
  }
  const cold = await timeMs(coldN, () => Promise.all(['INBOX', 'Junk'].map((f) => withImap(account, (c) => searchRecentMail(c, f, miss)))));
  await transport.close();
  await anchorConn.close();
  const loadAfter = loadavg()[0]!;

  const a = summary(anchor);
  const m = summary(misses);
  const h = summary(hits);
  const c = summary(cold);
  console.log(`anchor (warm NOOP round trip): p50 ${a.p50} ms (p10 ${a.p10}, p90 ${a.p90})`);
  console.log(`last look, nothing from the lead: p50 ${m.p50} ms (p10 ${m.p10}, p90 ${m.p90}) = ${round(m.p50 / a.p50, 1)} x anchor`);
  console.log(`last look, one message from the lead: p50 ${h.p50} ms (p10 ${h.p10}, p90 ${h.p90}) = ${round(h.p50 / a.p50, 1)} x anchor`);
  console.log(`last look on fresh connections: p50 ${c.p50} ms (p10 ${c.p10}, p90 ${c.p90}) = ${round(c.p50 / a.p50, 1)} x anchor`);
  console.log(`load average (1 min): ${round(loadBefore, 2)} before, ${round(loadAfter, 2)} after; ${looks} looks per series`);
  return {
    looks,
    anchor_noop_p50_ms: a.p50,
    anchor_noop_p10_ms: a.p10,
    anchor_noop_p90_ms: a.p90,
    miss_p50_ms: m.p50,
    miss_p10_ms: m.p10,
    miss_p90_ms: m.p90,
    miss_vs_anchor: round(m.p50 / a.p50, 2),
    hit_p50_ms: h.p50,
    hit_p10_ms: h.p10,
    hit_p90_ms: h.p90,
    hit_vs_anchor: round(h.p50 / a.p50, 2),
    cold_p50_ms: c.p50,
    cold_p90_ms: c.p90,
    cold_vs_anchor: round(c.p50 / a.p50, 2),
    load_before: round(loadBefore, 2),
    load_after: round(loadAfter, 2),
  };
}

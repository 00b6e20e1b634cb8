/**
 * Placement on real spam filters (test/mail/filterbed.sh: Postfix MX → rspamd milter → Dovecot
 * Sieve filing spam into Junk): the share of Cadenza-composed emails that land in INBOX, before and
 * after the warmup's rescue (the IMAP connector's moveToInbox on every copy in Junk), for plain
 * (ham) and for spammy content.
 *
 *   npm run bench -- placement [--messages=20] [--rounds=3]
 *
 * Each round sends --messages emails of each kind (interleaved rounds, bench/lib/rounds.ts) to
 * filter-bed users junk11..junk20 and reports per kind: INBOX share before and after the rescue
 * (median and min–max over the rounds) and the rescue's time per message. The anchor is the ham
 * case: the spammy case's share is read against it, round by round. Placement is a verdict, not a
 * timing: the shares do not move with the machine's load; the rescue times do.
 */
import { randomInt } from 'node:crypto';
import { measurePlacement, resetFilterBed, startFilterBed, type ContentKind } from '../test/mail/filterbed.ts';
import { intFlag } from './lib/args.ts';
import { describeLoad, interleavedRounds, loadFigures, machineLoad, showSpread, spreadFigures } from './lib/rounds.ts';

export default async function placement(args: string[]): Promise<Record<string, unknown>> {
  const messages = intFlag(args, 'messages', 20);
  const rounds = intFlag(args, 'rounds', 3);
  await startFilterBed();
  // Its own users, emptied: each round reads a whole folder, which earlier runs would fill.
  const users = [11, 12, 13, 14, 15, 16, 17, 18, 19, 20];
  await resetFilterBed(users);
  const before = machineLoad();
  console.log(`placement on the filter bed: ${messages} emails per kind per round, ${rounds} rounds; ${describeLoad(before)}`);
  const cases = ['ham', 'spammy'] as const satisfies readonly ContentKind[];
  const r = await interleavedRounds({
    rounds,
    cases,
    warmup: false,
    run: async (kind) => {
      // A user of the benchmark's own (junk11..junk20), so that runs never read a test's mail.
      const p = await measurePlacement(kind, users[randomInt(users.length)]!, messages);
      return { inbox_before_pct: p.inboxBefore * 100, inbox_after_pct: p.inboxAfter * 100, rescue_ms_per_msg: p.rescued ? p.rescueMs / p.rescued : 0 };
    },
    onRound: (i, f) => console.log(`  round ${i + 1}: ham ${f.ham.inbox_before_pct}% → ${f.ham.inbox_after_pct}%, spammy ${f.spammy.inbox_before_pct}% → ${f.spammy.inbox_after_pct}% in INBOX`),
  });
  const after = machineLoad();
  const figures: Record<string, unknown> = { messages, rounds };
  for (const kind of cases) {
    const b = r.spread(kind, 'inbox_before_pct');
    const a = r.spread(kind, 'inbox_after_pct');
    console.log(`${kind.padEnd(6)} INBOX before rescue ${showSpread(b, (x) => `${x.toFixed(0)}%`)}, after ${showSpread(a, (x) => `${x.toFixed(0)}%`)}`);
    Object.assign(figures, spreadFigures(`${kind}_inbox_before_pct`, b), spreadFigures(`${kind}_inbox_after_pct`, a));
  }
  const rescue = r.spread('spammy', 'rescue_ms_per_msg');
  console.log(`rescue (IMAP MOVE Junk → INBOX, one connection per move): ${showSpread(rescue, (x) => `${x.toFixed(1)} ms`)} per message`);
  Object.assign(figures, spreadFigures('rescue_ms_per_msg', rescue));
  console.log(`after: ${describeLoad(after)}`);
  return { ...figures, ...loadFigures(before, after) };
}

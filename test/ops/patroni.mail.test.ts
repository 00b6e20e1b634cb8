import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeMailBed } from '../mail/describe-mail-bed.ts';
import { patroniTools, runPatroniDrill } from './patroni-drill.ts';

/**
 * The Patroni drill, short (4 mailboxes, one lead each, one round): the primary's link is cut while
 * the sends and the prospects' replies are under way; Patroni promotes the synchronous standby and
 * Cadenza, whose connections to the old primary hang rather than fail, carries on against it. The
 * full one (a SIGKILL round, then a cut, 16 sends, past the follow-ups' due time):
 * `npm run drill:patroni` (patroni-drill.ts).
 */
const skip = await patroniTools();
if (skip) {
  describe.skip(`Patroni drill (skipped: ${skip})`, () => undefined);
} else {
  describeMailBed('Patroni drill: network cut of the primary, Patroni promotes the synchronous standby', () => {
    it('no step sent twice, none forgotten, all settled; every reply stored and its enrollment stopped; resumes on the new primary', async () => {
      const r = await runPatroniDrill({ mailboxes: 4, leadsPerMailbox: 1, faults: ['cut'], followUpMinutes: 1, waitForFollowUps: false, ttl: 8, clusterDir: join(tmpdir(), `cadenza-patroni-${process.pid}`) });
      const { output, ...figures } = r;
      const why = `${JSON.stringify(figures, null, 1)}\n${output}`;
      const x = r.rounds[0]!;
      console.log(`patroni drill (short): cut of ${x.node}, promoted after ${x.promotedMs} ms, Cadenza's first commit after ${x.resumeMs} ms; ${r.sends} sends, ${r.replies} replies`);
      expect(r.duplicates, why).toEqual([]);
      expect(r.forgotten, why).toEqual([]);
      expect(r.unsettled, why).toEqual([]);
      expect(r.lostReplies, why).toEqual([]);
      expect(r.notStopped, why).toEqual([]);
      expect(r.followUpsAfterReply, why).toEqual([]);
      expect(r.replies, why).toBeGreaterThan(0);
      expect(r.rounds[0]!.promotedMs, why).not.toBeNull();
      expect(r.rounds[0]!.resumeMs, why).not.toBeNull();
    }, 180_000);
  });
}

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeMailBed } from '../mail/describe-mail-bed.ts';
import { pitrTools, runPitrDrill } from './pitr-drill.ts';

/**
 * The point-in-time recovery drill, short (2 mailboxes, one lead each, an intro and a follow-up a
 * minute later; 300 nurture enrollments moved and 200 wrong-list leads enrolled by the bad action;
 * one prospect answers its intro after the restore point): restore to the point before the bad
 * action, reconcile-sent, Cadenza again (with the sync role, from the restored cursors). The full one with its figures:
 * `npm run drill:pitr` (pitr-drill.ts).
 */
const skip = await pitrTools();
if (skip) {
  describe.skip(`point-in-time recovery drill (skipped: ${skip})`, () => undefined);
} else {
  describeMailBed('point-in-time recovery drill: restore before a bad bulk action, reconcile with the Sent folders', () => {
    it('the bad action is undone, the steps sent after the restore point are recorded and none is sent twice; a reply after the restore point is read again and its follow-up never sent', async () => {
      const r = await runPitrDrill({
        mailboxes: 2,
        sendingLeads: 1,
        followUp: true,
        replies: 1,
        nurtureLeads: 300,
        wrongLeads: 200,
        // The restore point as Cadenza starts, before its first send: every good step is sent after
        // it (the full drill also has steps sent before it, which costs a pacing gap here).
        sentBeforeRestorePoint: 0,
        sentAfterBadAction: 2,
        pitrDir: join(tmpdir(), `cadenza-pitr-test-${process.pid}`),
        port: 5562,
      });
      const { output, ...figures } = r;
      const why = `${JSON.stringify(figures, null, 1)}\n${output}`;
      expect(r.restored.nurtureWaiting, why).toBe(300);
      expect(r.restored.wrongListEnrollments, why).toBe(0);
      expect(r.restored.movedEnrollments, why).toBe(0);
      expect(r.goodSentAfterRestorePoint, why).toBeGreaterThan(0);
      // At least those (a send whose commit straddled the restore point is reconciled too).
      expect(r.reconciled.recorded, why).toBeGreaterThanOrEqual(r.goodSentAfterRestorePoint);
      expect(r.missed, why).toEqual([]);
      expect(r.duplicates, why).toEqual([]);
      expect(r.unsettled, why).toEqual([]);
      // The reply that arrived between the restore point and the restore.
      expect(r.replies.sent, why).toBe(1);
      expect(r.replies.stoppedBeforeRestore, why).toBe(1);
      expect(r.replies.restoredCursors, why).toBe(2);
      expect(r.replies.stoppedAfterRestore, why).toBe(1);
      expect(r.replies.followUpsSent, why).toEqual([]);
    }, 360_000);
  });
}

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeMailBed } from '../mail/describe-mail-bed.ts';
import { pitrTools, runPitrDrill } from './pitr-drill.ts';

/**
 * The point-in-time recovery drill, short (2 mailboxes, one lead each, one email; 300 nurture
 * enrollments moved and 200 wrong-list leads enrolled by the bad action): restore to the point
 * before the bad action, reconcile-sent, Cadenza again. The full one with its figures:
 * `npm run drill:pitr` (pitr-drill.ts).
 */
const skip = await pitrTools();
if (skip) {
  describe.skip(`point-in-time recovery drill (skipped: ${skip})`, () => undefined);
} else {
  describeMailBed('point-in-time recovery drill: restore before a bad bulk action, reconcile with the Sent folders', () => {
    it('the bad action is undone, the steps sent after the restore point are recorded and none is sent twice', async () => {
      const r = await runPitrDrill({
        mailboxes: 2,
        sendingLeads: 1,
        followUp: false,
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
    }, 240_000);
  });
}

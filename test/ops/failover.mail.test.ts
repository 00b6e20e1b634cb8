import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeMailBed } from '../mail/describe-mail-bed.ts';
import { pairTools, runFailoverDrill } from './failover-drill.ts';

/**
 * The failover drill, short (4 mailboxes, one send each): SIGKILL of the primary while the sends
 * are under way, pg_ctl promote of the synchronous standby, Cadenza carries on against it on its
 * multi-host URL. The full one with its figures: `npm run drill:failover` (failover-drill.ts).
 */
const skip = await pairTools();
if (skip) {
  describe.skip(`failover drill (skipped: ${skip})`, () => undefined);
} else {
  describeMailBed('failover drill: SIGKILL of the primary, manual promotion of the synchronous standby', () => {
    it('no step sent twice, none forgotten, every send settled; resumes on the promoted standby', async () => {
      const r = await runFailoverDrill({ mailboxes: 4, leadsPerMailbox: 1, promoteAfterMs: 500, pairDir: join(tmpdir(), `cadenza-drill-pair-${process.pid}`) });
      const { output, ...figures } = r;
      const why = `${JSON.stringify(figures, null, 1)}\n${output}`;
      expect(r.duplicates, why).toEqual([]);
      expect(r.forgotten, why).toEqual([]);
      expect(r.unsettled, why).toEqual([]);
      expect(r.sentBeforeKill, why).toBeGreaterThan(0);
      expect(r.resumeMs, why).not.toBeNull();
    }, 300_000);
  });
}

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { expect, it } from 'vitest';
import { describeMailBed } from './describe-mail-bed.ts';
import { countByMessageId, mailBed, MAILBED_SCRIPT, readInbox, resetMailBed } from './mailbed.ts';

/** The test bed itself: idempotent start, per-user reset, plus-addressing still reaching INBOX. */

const run = promisify(execFile);
const p5 = mailBed.prospects[4]!;

async function inject(to: string, messageId: string): Promise<void> {
  // The injection port: no AUTH, test domains only (what a "remote" sender looks like to the bed).
  const t = nodemailer.createTransport({ host: mailBed.host, port: mailBed.injectPort, secure: false, ignoreTLS: true });
  try {
    await t.sendMail({ envelope: { from: 'someone@example.test', to: [to] }, raw: `From: someone@example.test\r\nTo: ${to}\r\nMessage-ID: ${messageId}\r\nSubject: bed\r\n\r\nx\r\n` });
  } finally {
    t.close();
  }
}

describeMailBed('mail test bed', () => {
  // Reconfiguring needs root; CI runs as root, a developer may have started the bed with sudo.
  it.skipIf(process.getuid?.() !== 0)('starting it again while it runs unchanged is a quick no-op', async () => {
    const t0 = Date.now();
    const { stdout } = await run('bash', [MAILBED_SCRIPT, 'start']);
    expect(stdout).toContain('already up (unchanged)');
    expect(Date.now() - t0).toBeLessThan(5_000);
    await expect(run('bash', [MAILBED_SCRIPT, 'status'])).resolves.toBeDefined();
  });

  it('delivers user+detail to INBOX (no folder of that name), and a per-user reset empties only that user', async () => {
    const id = `<${randomUUID()}@example.test>`;
    await inject(`p5+campaign@prospects.test`, id);
    expect(await readInbox(p5.user, p5.pass, id)).toHaveLength(1);
    await resetMailBed([p5.user]);
    expect(await countByMessageId(p5.user, p5.pass, id)).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { parseMail } from '../parse/parse-mail.ts';
import { classify } from './ladder.ts';

/**
 * Bounce-shaped hostile input: the rungs read bodies with regular expressions, and each of these
 * shapes once made a naive pattern quadratic or worse. Each must classify well within a second.
 */

const BOUNCE_HEAD = 'From: MAILER-DAEMON@mx.example.org\nTo: rep@cadenza.test\nSubject: Undelivered Mail Returned to Sender\nReturn-Path: <>\n\n';

async function timed(body: string): Promise<{ ms: number; label: string }> {
  const mail = await parseMail(BOUNCE_HEAD + body);
  const started = performance.now();
  const c = await classify(mail);
  return { ms: performance.now() - started, label: c.label };
}

describe('hostile bounce bodies', () => {
  it('a megabyte-long line of address-like characters without an @', { timeout: 20_000 }, async () => {
    const r = await timed(`could not be delivered\n${'a=b.'.repeat(250_000)}\n`);
    expect(r.ms).toBeLessThan(1000);
  });

  it('a long run of blank and whitespace-only lines', { timeout: 20_000 }, async () => {
    const r = await timed(`could not be delivered\n${' \t\n'.repeat(50_000)}x@example.com\n${' '.repeat(50_000)}\n`);
    expect(r.ms).toBeLessThan(1000);
  });

  it('thousands of recipients in one paragraph', { timeout: 20_000 }, async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `  user${i}@example.com\n    550 5.1.1 User unknown`).join('\n');
    const r = await timed(`The following address(es) failed:\n\n${lines}\n`);
    expect(r.label).toBe('bounce');
    expect(r.ms).toBeLessThan(1000);
  });
});

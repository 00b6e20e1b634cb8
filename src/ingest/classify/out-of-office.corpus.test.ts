import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { parseMail } from '../parse/parse-mail.ts';
import { headerValue } from '../types.ts';
import { detectOutOfOffice } from './out-of-office.ts';
import { CORPORA } from '../../../test/corpora/location.ts';

/**
 * The out-of-office rung on the shared corpora's auto-replies (sisimai kind "autoreply",
 * autoreply-ext label "auto_reply") and human replies. A sample the rung cannot read from its words
 * must at least carry RFC 3834's Auto-Submitted, which the header rung decides before this one.
 */
const present = existsSync(path.join(CORPORA, 'sisimai-labels.jsonl')) && existsSync(path.join(CORPORA, 'autoreply-ext-labels.jsonl'));

interface Row {
  file: string;
  kind?: string;
  label?: string;
  return_date?: string | null;
}
const rows = (name: string): Row[] =>
  readFileSync(path.join(CORPORA, name), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);

async function run(row: Row) {
  const mail = await parseMail(readFileSync(path.join(CORPORA, row.file)));
  return { mail, ooo: detectOutOfOffice(mail, mail.text) };
}

describe.skipIf(!present)('out-of-office on the corpora', () => {
  it('detects the auto-replies, or they carry Auto-Submitted for the header rung', async () => {
    const autos = [...rows('sisimai-labels.jsonl').filter((r) => r.kind === 'autoreply'), ...rows('autoreply-ext-labels.jsonl').filter((r) => r.label === 'auto_reply')];
    expect(autos.length).toBeGreaterThan(0);
    let detected = 0;
    const lines: string[] = [];
    for (const row of autos) {
      const { mail, ooo } = await run(row);
      const autoSubmitted = /^\s*auto-(?:replied|generated)/i.test(headerValue(mail, 'auto-submitted') ?? '');
      const back = ooo?.returnDate == null ? '-' : DateTime.fromMillis(ooo.returnDate, { zone: 'utc' }).toISODate();
      lines.push(`${row.file}: ${ooo ? `out_of_office ${ooo.confidence} return ${back}` : 'not by this rung'}${autoSubmitted ? ' (Auto-Submitted)' : ''}`);
      if (ooo) detected++;
      expect(ooo !== null || autoSubmitted, row.file).toBe(true);
      if (row.return_date) expect(back, row.file).toBe(row.return_date);
    }
    console.log(`out-of-office rung: ${detected}/${autos.length} auto-reply samples by their words\n  ${lines.join('\n  ')}`);
  });

  it('calls no human reply out-of-office', async () => {
    const humans = rows('autoreply-ext-labels.jsonl').filter((r) => r.label === 'human_reply' || r.label === 'not_bounce');
    for (const row of humans) expect((await run(row)).ooo, row.file).toBeNull();
  });
});

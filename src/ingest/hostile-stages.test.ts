import { describe, expect, it } from 'vitest';
import { classifyFeedback } from './classify/feedback.ts';
import { classifyByHeaders } from './classify/headers.ts';
import { detectBounce } from './classify/bounce/index.ts';
import { classifyIntent, unsubscribeRequest } from './classify/intent/index.ts';
import { classify } from './classify/ladder.ts';
import { detectOutOfOffice } from './classify/out-of-office.ts';
import { extractReturnDate } from './classify/out-of-office/return-date.ts';
import { hostileMessages, hostileTemplates } from '../../test/fuzz/hostile-corpus.ts';
import { htmlToText } from './parse/html-to-text.ts';
import { parseMailSafe } from './parse/parse-mail.ts';
import { extractReplyText } from './reply-text/index.ts';
import { normaliseSubject, referencedIds, threadKeys } from './thread.ts';
import { parseTemplate } from '../sequence/template/parse.ts';
import { renderEmail } from '../sequence/template/render.ts';
import { validateTemplate } from '../sequence/template/validate.ts';

/**
 * Every stage that reads a stranger's text, timed on its own over the generated hostile corpus
 * (about 1 MB a message). A linear stage on capped input takes milliseconds; the budget is wide
 * for a loaded 2-core machine, and a quadratic one (the out-of-office rung's tag-stripping regexes
 * on `<script` × 150 000 took minutes) is far past it. A stage that blocks for minutes cannot be
 * interrupted by a test timeout, so the budget is checked per stage, on one message at a time.
 */
const STAGE_BUDGET_MS = 1500;
const NOW = Date.UTC(2026, 10, 30);

function timed<T>(problems: string[], what: string, f: () => T): T {
  const t0 = performance.now();
  const r = f();
  const ms = performance.now() - t0;
  if (ms > STAGE_BUDGET_MS) problems.push(`${what}: ${Math.round(ms)} ms`);
  return r;
}

describe('every ingestion stage is fast on hostile input', () => {
  // Warm the intent model and the phrase regexes once: their first use costs a one-off load.
  it('warm up', async () => {
    classifyIntent('hello there, interested');
    unsubscribeRequest('please remove me');
    await parseMailSafe('From: a@b.example\r\nSubject: x\r\n\r\nhi\r\n');
  });

  for (const m of hostileMessages()) {
    it(m.name, { timeout: 60_000 }, async () => {
      const problems: string[] = [];
      const t0 = performance.now();
      const r = await parseMailSafe(m.raw);
      if (performance.now() - t0 > STAGE_BUDGET_MS) problems.push(`parse: ${Math.round(performance.now() - t0)} ms`);
      if (r.ok) {
        const mail = r.mail;
        const html = mail.html ?? '';
        timed(problems, 'htmlToText', () => htmlToText(html));
        const reply = timed(problems, 'reply text', () => extractReplyText({ text: mail.text, html: mail.html, from: mail.from?.address ?? null }));
        timed(problems, 'headers rung', () => classifyByHeaders(mail));
        timed(problems, 'feedback rung', () => classifyFeedback(mail));
        timed(problems, 'bounce rung', () => detectBounce(mail));
        timed(problems, 'out-of-office rung', () => detectOutOfOffice(mail, reply.text, NOW));
        timed(problems, 'out-of-office rung, no new text', () => detectOutOfOffice(mail, '', NOW));
        timed(problems, 'return date', () => extractReturnDate(mail.text, NOW));
        timed(problems, 'unsubscribe phrases', () => unsubscribeRequest(reply.text));
        timed(problems, 'unsubscribe phrases, whole text', () => unsubscribeRequest(mail.text));
        timed(problems, 'intent', () => classifyIntent(reply.text));
        timed(problems, 'threading', () => {
          normaliseSubject(mail.subject);
          referencedIds(mail);
          threadKeys([{ mail, threadId: null, classification: { label: 'human_reply' } }]);
        });
        const t1 = performance.now();
        const c = await classify(mail, { newText: reply.text });
        if (performance.now() - t1 > STAGE_BUDGET_MS) problems.push(`ladder: ${Math.round(performance.now() - t1)} ms`);
        expect(c.label).toBeTruthy();
      }
      expect(problems).toEqual([]);
    });
  }

  it('send side: hostile templates and spintax parse, validate and render fast', () => {
    const problems: string[] = [];
    const ctx = { lead: { email: 'ann@acme.test', first_name: 'Ann' }, sender: { email: 'rep@cadenza.test', name: 'Rep' } };
    for (const t of hostileTemplates()) {
      timed(problems, `${t.name} parse`, () => parseTemplate(t.text));
      timed(problems, `${t.name} validate`, () => validateTemplate(t.text));
      timed(problems, `${t.name} render`, () => renderEmail({ subject: t.text.slice(0, 2000), text: t.text, html: t.text }, ctx, { enrollmentId: 'e', stepId: 's' }));
    }
    expect(problems).toEqual([]);
  });
});

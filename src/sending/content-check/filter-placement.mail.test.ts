import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateSender, filterBed, resetFilterBed, filterBedSkipReason, kindContent, measurePlacement, startFilterBed } from '../../../test/mail/filterbed.ts';
import { checkStepContent } from './check.ts';
import { rspamdScorer } from './rspamd-scorer.ts';

/**
 * Placement judged by a real spam filter (test/mail/filterbed.sh: Postfix MX → rspamd milter →
 * Dovecot Sieve): Cadenza-composed plain mail lands in INBOX, spammy content in Junk; the warmup's
 * rescue (the IMAP connector's moveToInbox) brings it back, and the placement figure shows it.
 * The content check scores the same spammy step with the same rspamd, rule hits in plain words.
 * Filter-bed users: junk1 (placement), none for the scorer.
 */
const reason = filterBedSkipReason();
(reason ? describe.skip : describe)(`placement on a real spam filter${reason ? ` (skipped: ${reason})` : ''}`, () => {
  let auth: Awaited<ReturnType<typeof authenticateSender>>;
  beforeAll(async () => {
    await startFilterBed();
    await resetFilterBed([1]);
    // SPF, DKIM and DMARC of sender.test, answered to rspamd by this test's DNS server.
    auth = await authenticateSender();
  }, 300_000);
  afterAll(() => auth?.dns.close());

  it('authenticated plain mail lands in INBOX; spammy content in Junk, and the IMAP rescue moves it back', async () => {
    const ham = await measurePlacement('ham', 1, 2, auth.dkim);
    expect(ham).toMatchObject({ sent: 2, inboxBefore: 1, inboxAfter: 1, rescued: 0 });
    for (const s of ham.statuses) expect(s).toMatch(/^No, score=/);
    // The filter saw the sender authenticated, through the DNS answers of this test only.
    for (const r of ham.results) for (const sym of ['R_SPF_ALLOW', 'R_DKIM_ALLOW', 'DMARC_POLICY_ALLOW']) expect(r).toContain(sym);
    expect(auth.dns.queries.map((q) => q.name)).toEqual(expect.arrayContaining([`${auth.dkim.selector}._domainkey.sender.test`]));

    // Authenticated, and still spam: content alone sends it to Junk.
    const spammy = await measurePlacement('spammy', 1, 2, auth.dkim);
    expect(spammy).toMatchObject({ sent: 2, inboxBefore: 0, inboxAfter: 1, rescued: 2 });
    for (const s of spammy.statuses) expect(s).toMatch(/^Yes, score=\d/);
  }, 30_000);

  it('the content check scores a step with the local rspamd: spammy content with its rules in plain words, plain content clean', async () => {
    const scorer = rspamdScorer({ url: filterBed.scannerUrl, timeoutMs: 5_000 });
    const base = {
      workspaceId: 'ws-check',
      stepId: 'step-1',
      lead: { email: 'sam@lead.test', first_name: 'Sam', last_name: 'Lead' },
      sender: { email: 'alice@sender.test', name: 'Alice Sender' },
      tracking: { key: randomBytes(32), baseUrl: 'https://t.sender.test', customDomain: null, opens: false, clicks: false },
      now: Date.parse('2026-12-02T12:00:00Z'),
      scorer,
    };
    const spam = await checkStepContent({ ...base, template: kindContent('spammy') });
    if (!spam.rendered || spam.score.status !== 'scored') throw new Error(`not scored: ${JSON.stringify(spam)}`);
    expect(spam.score.spam).toBe(true);
    expect(spam.score.score).toBeGreaterThanOrEqual(spam.score.threshold);
    expect(spam.score.hits.map((h) => h.symbol)).toEqual(expect.arrayContaining(['SUBJ_ALL_CAPS', 'HTTP_TO_IP']));
    expect(spam.score.hits.find((h) => h.symbol === 'SUBJ_ALL_CAPS')!.explanation).toBe('The subject is written in capital letters.');
    expect(spam.level).toBe('bad');
    expect(spam.findings.filter((f) => f.level === 'bad').map((f) => f.code)).toEqual(expect.arrayContaining(['all_caps', 'links_per_word']));

    const ham = await checkStepContent({ ...base, template: kindContent('ham') });
    if (!ham.rendered || ham.score.status !== 'scored') throw new Error(`not scored: ${JSON.stringify(ham)}`);
    expect(ham.score.spam).toBe(false);
    expect(ham.level).toBe('ok');
    // Content alone: neither a made-up connection nor the unsigned rendering's SPF/DKIM/DMARC weighs.
    expect(ham.score.score).toBeLessThan(1);
    for (const s of [...ham.score.hits, ...spam.score.hits]) expect(s.symbol).not.toMatch(/^(HFILTER_|R_SPF_|R_DKIM_|DMARC_)/);
  }, 30_000);
});

import { describe, expect, it } from 'vitest';
import { contentFindings, worstLevel, type ContentCheckInput, type FindingCode } from './findings.ts';

const plain: ContentCheckInput = {
  subject: 'Quick question about onboarding',
  text: 'Hi Sam,\n\nI saw your support team is growing this quarter. We help teams like yours onboard new agents in half the time, with playbooks your leads already use. Would a short call next week make sense? If not, no worries at all, just tell me and I will not write again.\n\nBest,\nAlice\nNot for you? https://t.acme.test/t/u/tok',
  html: null,
  tracking: { opens: false, clicks: false, customDomain: null },
  listUnsubscribe: true,
  unsubscribeUrl: 'https://t.acme.test/t/u/tok',
};
const level = (i: ContentCheckInput, code: FindingCode) => contentFindings(i).filter((f) => f.code === code).map((f) => f.level);

describe('content findings', () => {
  it('a plain, personal email passes every check', () => {
    const f = contentFindings(plain);
    expect(f.map((x) => x.code).sort()).toEqual(['all_caps', 'images_per_word', 'links_per_word', 'spam_phrases', 'text_part', 'tracking_domain', 'unsubscribe']);
    expect(worstLevel(f)).toBe('ok');
    expect(f.find((x) => x.code === 'unsubscribe')!.message).toMatch(/opt-out in the body/);
  });

  it('links: one per 40 words is fine, more is a warning, a link to an IP is bad, the unsubscribe link does not count', () => {
    expect(level({ ...plain, text: `${plain.text}\nhttps://acme.test/case-study\n${plain.unsubscribeUrl}` }, 'links_per_word')).toEqual(['ok']);
    expect(level({ ...plain, text: 'See https://a.test/1 and https://a.test/2 now' }, 'links_per_word')).toEqual(['bad']);
    expect(level({ ...plain, text: `${plain.text} https://a.test/1 https://a.test/2` }, 'links_per_word')).toEqual(['warn']);
    expect(level({ ...plain, text: `${plain.text} http://203.0.113.7/login` }, 'links_per_word')).toEqual(['ok', 'bad']);
  });

  it('images with little text, HTML without text, shouting, spam phrases', () => {
    expect(level({ ...plain, text: 'Look', html: '<p>Look</p><img src="https://a.test/x.png"><img src="https://a.test/y.png">' }, 'images_per_word')).toEqual(['bad']);
    expect(level({ ...plain, text: '', html: '<p>Only HTML here</p>' }, 'text_part')).toEqual(['bad']);
    expect(level({ ...plain, subject: 'FREE MONEY FOR YOU' }, 'all_caps')).toEqual(['bad']);
    expect(level({ ...plain, subject: 'Q3 plans at ACME' }, 'all_caps')).toEqual(['ok']);
    const spammy = contentFindings({ ...plain, text: `${plain.text}\nAct now: 100% free, guaranteed, limited time!` }).find((f) => f.code === 'spam_phrases')!;
    expect(spammy.level).toBe('bad');
    expect(spammy.message).toContain('"act now"');
    // Whole words only: "freedom" and "urgently" are not spam phrases... but "urgent" inside "urgently" must not match.
    expect(level({ ...plain, text: `${plain.text} We value freedom and respond urgently.` }, 'spam_phrases')).toEqual(['ok']);
  });

  it('tracking on the shared address is a warning, on a custom domain fine; no List-Unsubscribe is bad', () => {
    expect(level({ ...plain, tracking: { opens: true, clicks: false, customDomain: null } }, 'tracking_domain')).toEqual(['warn']);
    expect(level({ ...plain, tracking: { opens: true, clicks: true, customDomain: 'links.acme.test' } }, 'tracking_domain')).toEqual(['ok']);
    // A custom host set but not serving yet: links are on the shared address, and the finding says why.
    const waiting = contentFindings({ ...plain, tracking: { opens: true, clicks: false, customDomain: null, waiting: { host: 't.acme.test', why: 'its CNAME is not verified yet' } } }).find((f) => f.code === 'tracking_domain')!;
    expect(waiting).toMatchObject({ level: 'warn', message: expect.stringContaining('your tracking host t.acme.test is not active (its CNAME is not verified yet)') });
    expect(level({ ...plain, listUnsubscribe: false }, 'unsubscribe')).toEqual(['bad']);
  });

  it('hostile input: 10 MB of tags and links is checked quickly (capped, linear)', () => {
    const huge = '<a href="http://x.test/'.repeat(200_000) + '<img '.repeat(200_000);
    const t0 = performance.now();
    const f = contentFindings({ ...plain, text: 'a '.repeat(3_000_000), html: huge, subject: 'A'.repeat(100_000) });
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(worstLevel(f)).toBe('bad');
  });
});

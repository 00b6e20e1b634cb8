import { randomBytes } from 'node:crypto';
import PostalMime, { type Email } from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { isCadenzaError } from '../../common/errors.ts';
import { composeEmail, type ComposeInput } from './compose.ts';
import { prepareEmail } from './prepare.ts';
import { htmlToText, sanitizeEmailHtml } from '../../common/email-html.ts';
import { signatureColumns } from '../../mailbox/signature.ts';

const signatureColumnsView = (html: string) => {
  const c = signatureColumns(html, null);
  return { html: c.signature_html ?? '', text: c.signature_text ?? '' };
};
import { MAX_REFERENCES } from './threading.ts';
import { openTrackingToken, trackingLinks } from './tracking.ts';
import { parseUnsubscribeMailto, recogniseUnsubscribeRequest } from './unsubscribe.ts';

const key = randomBytes(32);
const WS = '0190a3c4-0000-7000-8000-000000000001';
const SR = '0190a3c4-0000-7000-8000-0000000000aa';
const links = () => trackingLinks({ key, baseUrl: 'https://t.acme.test', workspaceId: WS, sendRequestId: SR });
const DATE = Date.UTC(2025, 2, 4, 14, 30, 5);

function input(over: Partial<ComposeInput> = {}): ComposeInput {
  return {
    messageId: '<0190a3c4-1111-7000-8000-000000000001@acme.test>',
    date: DATE,
    from: { address: 'sam@acme.test', name: 'Sam Rep' },
    to: { address: 'ann@prospect.test', name: 'Ann Lee' },
    content: { subject: 'Quick question', text: 'Hi Ann,\n\nsee https://acme.test/pricing\n\nSam' },
    links: links(),
    ...over,
  };
}

const header = (m: Email, name: string) => m.headers.filter((h) => h.key === name.toLowerCase()).map((h) => h.value);
// Parsers keep the line break that ends a part; the body we sent is what comes before it.
const parse = async (raw: Buffer) => {
  const m = await PostalMime.parse(raw);
  return { ...m, text: m.text?.replace(/\n$/, ''), html: m.html?.replace(/\n$/, '') };
};

describe('composeEmail', () => {
  it('a first email: the given Message-ID, Date from the clock, names in From and To, plain text only, no custom headers', async () => {
    const c = await composeEmail(input());
    const m = await parse(c.raw);
    expect(m.messageId).toBe('<0190a3c4-1111-7000-8000-000000000001@acme.test>');
    expect(header(m, 'message-id')).toHaveLength(1);
    expect(new Date(m.date!).getTime()).toBe(DATE);
    expect(m.from).toEqual({ name: 'Sam Rep', address: 'sam@acme.test' });
    expect(m.to).toEqual([{ name: 'Ann Lee', address: 'ann@prospect.test' }]);
    expect(m.subject).toBe('Quick question');
    expect(header(m, 'mime-version')).toEqual(['1.0']);
    expect(header(m, 'content-type')[0]).toMatch(/^text\/plain; charset=utf-8/);
    expect(m.text).toBe('Hi Ann,\n\nsee https://acme.test/pricing\n\nSam');
    expect(m.html).toBeUndefined();
    expect(header(m, 'in-reply-to')).toEqual([]);
    expect(header(m, 'references')).toEqual([]);
    expect(m.headers.map((h) => h.key).filter((k) => k.startsWith('x-'))).toEqual([]);
    expect(c.raw.toString('latin1')).not.toMatch(/[^\r]\n/); // CRLF line ends only
    expect(c.sent).toEqual({ subject: 'Quick question', inReplyTo: null, refs: [], threadId: null });
    expect(c.envelope).toEqual({ from: 'sam@acme.test', to: ['ann@prospect.test'] });
  });

  it('List-Unsubscribe has the https link and the mailto, with One-Click, and both carry one valid token', async () => {
    const c = await composeEmail(input());
    const m = await parse(c.raw);
    expect(header(m, 'list-unsubscribe-post')).toEqual(['List-Unsubscribe=One-Click']);
    const lu = header(m, 'list-unsubscribe');
    expect(lu).toHaveLength(1);
    const uris = [...lu[0]!.matchAll(/<([^>]+)>/g)].map((x) => x[1]!);
    expect(uris).toHaveLength(2);
    const [https, mailto] = uris as [string, string];
    expect(https).toMatch(/^https:\/\/t\.acme\.test\/t\/u\/[A-Za-z0-9_-]+$/);
    const token = https.split('/').pop()!;
    expect(openTrackingToken(key, token)).toEqual({ k: 'u', ws: WS, sr: SR });
    expect(parseUnsubscribeMailto(mailto)).toEqual({ to: 'sam@acme.test', token });
    // No line of the header is longer than the RFC 5322 limit.
    for (const line of c.raw.toString('latin1').split('\r\n')) expect(line.length).toBeLessThanOrEqual(998);
  });

  it('a follow-up threads: In-Reply-To the previous step, References the chain, "Re:" the first subject, Gmail threadId carried', async () => {
    const thread = { messageIds: ['<a1@acme.test>', '<a2@acme.test>'], firstSubject: 'Quick question', threadId: '18c2f0a1b2c3d4e5' };
    const c = await composeEmail(input({ content: { subject: null, text: 'Bumping this.' }, thread }));
    const m = await parse(c.raw);
    expect(m.subject).toBe('Re: Quick question');
    expect(m.inReplyTo).toBe('<a2@acme.test>');
    expect(m.references).toBe('<a1@acme.test> <a2@acme.test>');
    expect(m.messageId).toBe(input().messageId);
    expect(c.threadId).toBe('18c2f0a1b2c3d4e5');
    expect(c.sent).toEqual({ subject: 'Re: Quick question', inReplyTo: '<a2@acme.test>', refs: ['<a1@acme.test>', '<a2@acme.test>'], threadId: '18c2f0a1b2c3d4e5' });

    // A step with its own subject keeps it, and still threads; Re: is never doubled.
    const own = await parse((await composeEmail(input({ content: { subject: 'New angle', text: 'x' }, thread }))).raw);
    expect([own.subject, own.inReplyTo]).toEqual(['New angle', '<a2@acme.test>']);
    const re = await parse((await composeEmail(input({ content: { subject: null, text: 'x' }, thread: { ...thread, firstSubject: 'RE: hello' } }))).raw);
    expect(re.subject).toBe('RE: hello');
  });

  it('keeps References to the first Message-ID and the most recent ones', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `<m${i}@acme.test>`);
    const c = await composeEmail(input({ content: { subject: null, text: 'x' }, thread: { messageIds: ids, firstSubject: 'Hi' } }));
    expect(c.references).toHaveLength(MAX_REFERENCES);
    expect(c.references[0]).toBe('<m0@acme.test>');
    expect(c.references.at(-1)).toBe('<m29@acme.test>');
    expect(c.inReplyTo).toBe('<m29@acme.test>');
  });

  it('HTML goes with its text alternative (text first); no pixel and no rewritten links when tracking is off', async () => {
    const html = '<html><body><p>Hi Ann, see <a href="https://acme.test/pricing?a=1&amp;b=2">pricing</a></p></body></html>';
    const c = await composeEmail(input({ content: { subject: 'Hi', text: 'Hi Ann, see https://acme.test/pricing?a=1&b=2', html } }));
    const m = await parse(c.raw);
    expect(header(m, 'content-type')[0]).toMatch(/^multipart\/alternative/);
    const raw = c.raw.toString('latin1');
    expect(raw.indexOf('Content-Type: text/plain')).toBeLessThan(raw.indexOf('Content-Type: text/html'));
    expect(m.html).toBe(html);
    expect(m.text).toBe('Hi Ann, see https://acme.test/pricing?a=1&b=2');
    expect(c.trackedLinks).toEqual([]);
    expect(c.openPixel).toBe(false);
    expect(m.html).not.toMatch(/\/t\/[oc]\//);
  });

  it('with tracking on: a pixel and rewritten links in the HTML part only, never the unsubscribe or mailto links', async () => {
    const l = links();
    const html = [
      '<html><body>',
      '<a href="https://acme.test/pricing?a=1&amp;b=2">pricing</a>',
      "<a class='x' href='http://acme.test/case-study'>case</a>",
      '<a href="mailto:sam@acme.test">mail me</a>',
      '<a href="#top">top</a>',
      `<a href="${l.unsubscribeUrl}">unsubscribe</a>`,
      '<a href=https://acme.test/bare>bare</a>',
      '</body></html>',
    ].join('\n');
    const text = 'See https://acme.test/pricing';
    const c = await composeEmail(input({ links: l, content: { subject: 'Hi', text, html }, track: { opens: true, clicks: true } }));
    const m = await parse(c.raw);
    expect(m.text).toBe(text);
    expect(c.trackedLinks).toEqual([
      { index: 0, url: 'https://acme.test/pricing?a=1&b=2' },
      { index: 1, url: 'http://acme.test/case-study' },
      { index: 2, url: 'https://acme.test/bare' },
    ]);
    const hrefs = [...m.html!.matchAll(/href=["']?([^"' >]+)/g)].map((x) => x[1]!);
    expect(hrefs[2]).toBe('mailto:sam@acme.test');
    expect(hrefs[3]).toBe('#top');
    expect(hrefs[4]).toBe(l.unsubscribeUrl);
    for (const [i, h] of [hrefs[0]!, hrefs[1]!, hrefs[5]!].entries()) {
      expect(h).toMatch(/^https:\/\/t\.acme\.test\/t\/c\/[A-Za-z0-9_-]+$/);
      expect(openTrackingToken(key, h.split('/').pop()!)).toEqual({ k: 'c', ws: WS, sr: SR, u: c.trackedLinks[i]!.url, i });
    }
    const pixel = /<img src="(https:\/\/t\.acme\.test\/t\/o\/([A-Za-z0-9_-]+)\.gif)" width="1" height="1"/.exec(m.html!);
    expect(pixel).not.toBeNull();
    expect(openTrackingToken(key, pixel![2]!)).toEqual({ k: 'o', ws: WS, sr: SR });
    expect(m.html!.indexOf('<img')).toBeLessThan(m.html!.indexOf('</body>'));
    expect(c.openPixel).toBe(true);
  });

  it('a plain-text email stays text-only with tracking off', async () => {
    const c = await composeEmail(input());
    const m = await parse(c.raw);
    expect(header(m, 'content-type')[0]).toMatch(/^text\/plain/);
    expect(m.html).toBeUndefined();
    expect(c.raw.toString('latin1')).not.toMatch(/\/t\/[oc]\//);
  });

  it('a plain-text email with tracking on gets an HTML alternative made from its text; the text part is left as written', async () => {
    const l = links();
    const text = `Hi Ann <3,\n\nsee https://acme.test/pricing?a=1&b=2.\nOr (https://acme.test/demo)\n\nSam\n${l.unsubscribeUrl}`;
    const c = await composeEmail(input({ links: l, content: { subject: 'Hi', text }, track: { opens: true, clicks: true } }));
    const m = await parse(c.raw);
    expect(m.text).toBe(text);
    expect(c.trackedLinks).toEqual([
      { index: 0, url: 'https://acme.test/pricing?a=1&b=2' },
      { index: 1, url: 'https://acme.test/demo' },
    ]);
    expect(c.openPixel).toBe(true);
    expect(m.html).toContain('<p>Hi Ann &lt;3,</p>');
    expect(m.html).toMatch(/<a href="https:\/\/t\.acme\.test\/t\/c\/[A-Za-z0-9_-]+">https:\/\/acme\.test\/pricing\?a=1&amp;b=2<\/a>\.<br>/);
    expect(m.html).toContain(`<a href="${l.unsubscribeUrl}">`);
    expect(m.html).toMatch(/<img src="https:\/\/t\.acme\.test\/t\/o\/[A-Za-z0-9_-]+\.gif"/);
    // Opens only: the pixel, and the links go straight to their destinations.
    const o = await composeEmail(input({ links: l, content: { subject: 'Hi', text }, track: { opens: true } }));
    expect(o.openPixel).toBe(true);
    expect(o.trackedLinks).toEqual([]);
    expect((await parse(o.raw)).html).toContain('<a href="https://acme.test/demo">');
  });

  it('names cannot inject headers or addresses; non-ASCII names and subjects are encoded', async () => {
    const c = await composeEmail(
      input({
        to: { address: 'ann@prospect.test', name: 'Ann "x" <evil@bad.test>, Bob\r\nBcc: evil@bad.test' },
        from: { address: 'sam@acme.test', name: 'Sám Ëxample' },
        content: { subject: 'Héllo\r\nBcc: evil@bad.test', text: 'x' },
      }),
    );
    const m = await parse(c.raw);
    expect(m.to).toHaveLength(1);
    expect(m.to![0]!.address).toBe('ann@prospect.test');
    expect(m.from).toEqual({ name: 'Sám Ëxample', address: 'sam@acme.test' });
    expect(header(m, 'bcc')).toEqual([]);
    expect(m.subject).toBe('Héllo Bcc: evil@bad.test');
    expect(c.envelope.to).toEqual(['ann@prospect.test']);
  });

  it('the same inputs give the same bytes (boundary from the Message-ID, date from the clock)', async () => {
    const i = input({ content: { subject: 'Hi', text: 'x', html: '<p>x</p>' } });
    expect((await composeEmail(i)).raw.equals((await composeEmail(i)).raw)).toBe(true);
  });

  it('refuses what it cannot send correctly, with INVALID_INPUT', async () => {
    const bad: Array<[Partial<ComposeInput>, RegExp]> = [
      [{ messageId: 'no-brackets@acme.test' }, /Message-ID/],
      [{ messageId: '<two@ats@x>' }, /Message-ID/],
      [{ to: { address: 'not an address' } }, /To address/],
      [{ from: { address: 'a@b.test>, <c@d.test' } }, /From address/],
      [{ content: { subject: null, text: 'x' } }, /first email of a thread needs a subject/],
      [{ content: { subject: 'x', text: '   ' } }, /text body/],
      [{ content: { subject: null, text: 'x' }, thread: { messageIds: ['garbage'], firstSubject: 'x' } }, /thread Message-ID/],
      [{ date: Number.NaN }, /date/],
    ];
    for (const [over, re] of bad) {
      const e = await composeEmail(input(over)).catch((x: unknown) => x);
      expect(isCadenzaError(e, 'INVALID_INPUT'), String(re)).toBe(true);
      expect((e as Error).message).toMatch(re);
    }
  });
});

describe('prepareEmail (render + compose for a claim)', () => {
  const claim = {
    requestId: SR,
    workspaceId: WS,
    enrollmentId: '0190a3c4-0000-7000-8000-0000000000ee',
    stepId: '0190a3c4-0000-7000-8000-0000000000f1',
    messageId: '<0190a3c4-2222-7000-8000-000000000002@acme.test>',
    to: 'ann@prospect.test',
    from: 'sam@acme.test',
  };
  const base = {
    claim,
    lead: { email: 'ann@prospect.test', first_name: 'Ann', last_name: 'Lee', company: 'Prospect Co' },
    sender: { email: 'sam@acme.test', name: 'Sam Rep' },
    now: DATE,
    tracking: { key, baseUrl: 'https://t.acme.test/' },
  };

  it('renders with {{unsubscribe_url}} pointing at the same token as the List-Unsubscribe header', async () => {
    const r = await prepareEmail({ ...base, template: { subject: '{Hi|Hello} {{first_name}}', text: 'Hi {{first_name}} at {{company}}.\nOpt out: {{unsubscribe_url}}' } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const m = await parse(r.email.raw);
    expect(m.to).toEqual([{ name: 'Ann Lee', address: 'ann@prospect.test' }]);
    expect(m.subject).toMatch(/^(Hi|Hello) Ann$/);
    expect(m.text).toContain(r.email.listUnsubscribe.httpsUrl);
    expect(r.email.messageId).toBe(claim.messageId);
    // A retry renders the same subject.
    const again = await prepareEmail({ ...base, template: { subject: '{Hi|Hello} {{first_name}}', text: 'x' } });
    expect(again.ok && again.email.subject).toBe(r.email.subject);
  });

  it('blocks with the reason and composes nothing when a value is missing', async () => {
    const r = await prepareEmail({ ...base, lead: { email: 'ann@prospect.test' }, template: { subject: 'Hi', text: 'Hi {{first_name}}' } });
    expect(r).toMatchObject({ ok: false, code: 'missing_value', variable: 'first_name' });
  });

  it('the mailto unsubscribe a receiver sends back is recognised by ingestion', async () => {
    const r = await prepareEmail({ ...base, template: { subject: 'Hi', text: 'x' } });
    if (!r.ok) throw new Error(r.reason);
    const { token } = parseUnsubscribeMailto(r.email.listUnsubscribe.mailto)!;
    // As a mail client would write it back: the subject of the mailto URI, perhaps with a prefix.
    expect(recogniseUnsubscribeRequest(key, { subject: `Fwd: unsubscribe ${token}` })).toMatchObject({ verdict: 'unsubscribe', confidence: 1, workspaceId: WS, sendRequestId: SR });
  });

  it("an editor's email: multipart/alternative, the step's HTML and its text, the mailbox's signature appended to both, never rendered as a template", async () => {
    const html = sanitizeEmailHtml('<p>Hi <strong>{{first_name | default: "there"}}</strong>,</p><ul><li><p>one</p></li></ul><script>x()</script>');
    const r = await prepareEmail({
      ...base,
      template: { subject: 'Hello', text: htmlToText(html), html },
      signature: signatureColumnsView('<p><em>Sam Rep</em><br><a href="https://acme.test">Acme {{ltd}}</a></p>'),
    });
    if (!r.ok) throw new Error(r.reason);
    const raw = r.email.raw.toString('utf8');
    expect(raw).toMatch(/^Content-Type: multipart\/alternative;/m);
    expect(raw.indexOf('Content-Type: text/plain')).toBeLessThan(raw.indexOf('Content-Type: text/html'));
    const m = await parse(r.email.raw);
    expect(m.text).toBe('Hi Ann,\n\n- one\n\nSam Rep\nAcme {{ltd}} (https://acme.test)');
    expect(m.html).toBe('<p>Hi <strong>Ann</strong>,</p><ul><li><p>one</p></li></ul><div class="cadenza-signature"><p><em>Sam Rep</em><br><a href="https://acme.test">Acme {{ltd}}</a></p></div>');
  });
});

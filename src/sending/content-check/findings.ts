/**
 * Cadenza's own content checks on one rendered email, pure and in linear time: what a reviewer of
 * cold email looks at before launch, each finding with a level and a sentence a rep can act on.
 *
 *   links_per_word   more than one link per 40 words, or more than 3 links: reads as a newsletter
 *   images_per_word  images with little text (filters score image-heavy, text-light mail as spam)
 *   tracking_domain  tracked links or pixel on a shared domain, not the workspace's own
 *   text_part        an HTML body without a real text alternative (MIME_HTML_ONLY in filters)
 *   all_caps         a shouting subject, or a body in capitals
 *   spam_phrases     phrases spam filters and readers associate with bulk mail
 *   unsubscribe      a List-Unsubscribe header (always) and an opt-out line in the body
 *
 * Every input is capped (CONTENT_LIMIT) and each check is one pass of non-backtracking patterns,
 * so a hostile template cannot make the check slow.
 */

export type FindingLevel = 'ok' | 'warn' | 'bad';
export type FindingCode = 'links_per_word' | 'images_per_word' | 'tracking_domain' | 'text_part' | 'all_caps' | 'spam_phrases' | 'unsubscribe';

export interface Finding {
  code: FindingCode;
  level: FindingLevel;
  message: string;
}

export interface ContentCheckInput {
  subject: string | null;
  text: string;
  html: string | null;
  /** Opens and clicks as the sequence sends them. */
  /**
   * customDomain: the tracking host links use (the custom host while it serves, else
   * settings.trackingDomain); waiting: a custom host set but not serving yet, and why.
   */
  tracking: { opens: boolean; clicks: boolean; customDomain: string | null; waiting?: { host: string; why: string } | null };
  /** The List-Unsubscribe header is present (composeEmail always adds it). */
  listUnsubscribe: boolean;
  /** This email's unsubscribe URL, to recognise an opt-out link in the body. */
  unsubscribeUrl?: string | null;
}

/** Characters of each part that the checks read; a real cold email is a few thousand. */
export const CONTENT_LIMIT = 200_000;

/** Lower-case phrases, matched on word boundaries; short on purpose: each is a known trigger. */
export const SPAM_PHRASES = [
  '100% free', '100% guaranteed', 'act now', 'apply now', 'as seen on', 'buy now', 'cash bonus', 'click here', 'click below',
  'congratulations', 'dear friend', 'double your', 'earn money', 'extra income', 'free gift', 'free money', 'get paid',
  'guaranteed', 'limited time', 'make money', 'no obligation', 'no risk', 'once in a lifetime', 'order now', 'risk-free',
  'risk free', 'special promotion', 'urgent', 'winner', 'you have been selected', 'this is not spam', 'wire transfer',
  'bitcoin', 'miracle', 'lowest price', 'million dollars', 'cheap', 'viagra',
] as const;

const cap = (s: string | null | undefined) => (s ?? '').slice(0, CONTENT_LIMIT);

/** Visible text of an HTML body: tags and entities out (one pass each, no nesting). */
export function htmlText(html: string): string {
  return cap(html)
    .replace(/<(script|style)\b[^<>]*>[^<]*<\/\1\s*>/gi, ' ')
    // [^<>] rather than [^>]: an unclosed "<" then costs only the text up to the next "<", so a
    // body of unclosed tags is read in linear time, not quadratic.
    .replace(/<[^<>]*>/g, ' ')
    .replace(/&nbsp;|&#160;/gi, ' ')
    .replace(/&[a-z0-9#]+;/gi, ' ');
}

export function countWords(s: string): number {
  return (s.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? []).length;
}

function links(text: string, html: string | null): string[] {
  const hrefs = html ? [...cap(html).matchAll(/<a\b[^<>]*?\bhref\s*=\s*["']?([^"'\s<>]+)/gi)].map((m) => m[1]!) : [];
  const bare = [...cap(text).matchAll(/\bhttps?:\/\/[^\s<>"')\]]+/gi)].map((m) => m[0]);
  return [...hrefs, ...bare];
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

export function contentFindings(i: ContentCheckInput): Finding[] {
  const text = cap(i.text);
  const html = i.html ? cap(i.html) : null;
  const subject = cap(i.subject).slice(0, 998);
  const words = countWords(text || (html ? htmlText(html) : ''));
  const out: Finding[] = [];

  // Links. The unsubscribe link is the reader's, not the sender's: it does not count.
  const unsub = i.unsubscribeUrl ?? null;
  const all = links(text, html).filter((u) => !unsub || !u.startsWith(unsub));
  const distinct = new Set(all.map((u) => u.replace(/[.,;:!?]+$/, '')));
  const perWord = distinct.size ? words / distinct.size : Infinity;
  if (distinct.size > 3 || (distinct.size > 0 && perWord < 40)) {
    out.push({ code: 'links_per_word', level: distinct.size > 5 || perWord < 15 ? 'bad' : 'warn', message: `${distinct.size} link(s) in ${words} words: cold email reads best with one link at most, and at least 40 words per link` });
  } else {
    out.push({ code: 'links_per_word', level: 'ok', message: distinct.size ? `${distinct.size} link(s) in ${words} words` : 'no links' });
  }
  // Raw IP links are a phishing pattern whatever their number.
  const ipLink = [...distinct].find((u) => /^\d{1,3}(\.\d{1,3}){3}$/.test(hostOf(u) ?? ''));
  if (ipLink) out.push({ code: 'links_per_word', level: 'bad', message: `a link goes to a bare IP address (${hostOf(ipLink)}): filters treat that as phishing` });

  // Images. Tracking pixels are counted under tracking, not here.
  const images = html ? (html.match(/<img\b/gi) ?? []).length : 0;
  if (images > 0 && words / images < 100) {
    out.push({ code: 'images_per_word', level: words < 50 ? 'bad' : 'warn', message: `${images} image(s) for ${words} words: mostly-image mail is scored as spam; keep one image per 100 words at most` });
  } else {
    out.push({ code: 'images_per_word', level: 'ok', message: images ? `${images} image(s) in ${words} words` : 'no images' });
  }

  // Tracking domain.
  if (i.tracking.opens || i.tracking.clicks) {
    const what = [i.tracking.opens ? 'an open pixel' : null, i.tracking.clicks ? 'tracked links' : null].filter(Boolean).join(' and ');
    out.push(
      i.tracking.customDomain
        ? { code: 'tracking_domain', level: 'ok', message: `${what} on your own tracking domain ${i.tracking.customDomain}` }
        : i.tracking.waiting
          ? { code: 'tracking_domain', level: 'warn', message: `${what} on Cadenza's shared address for now: your tracking host ${i.tracking.waiting.host} is not active (${i.tracking.waiting.why}); links use it once its certificate is issued (Domains)` }
          : { code: 'tracking_domain', level: 'warn', message: `${what} on Cadenza's shared address, not a tracking domain of your own: set a custom tracking domain, or turn tracking off (plain links deliver best)` },
    );
  } else {
    out.push({ code: 'tracking_domain', level: 'ok', message: 'no open or click tracking: nothing rewritten' });
  }

  // Text part.
  if (html !== null) {
    const htmlWords = countWords(htmlText(html));
    if (text.trim() === '') out.push({ code: 'text_part', level: 'bad', message: 'HTML without a text part: filters score HTML-only mail as spam' });
    else if (htmlWords > 20 && words < htmlWords / 3) out.push({ code: 'text_part', level: 'warn', message: `the text part (${words} words) says much less than the HTML (${htmlWords} words)` });
    else out.push({ code: 'text_part', level: 'ok', message: 'a text part beside the HTML' });
  } else {
    out.push({ code: 'text_part', level: 'ok', message: 'plain text' });
  }

  // Capitals: the subject's letters, and the body's words of 3+ letters.
  const subjLetters = subject.replace(/[^\p{L}]/gu, '');
  const subjUpper = subjLetters.replace(/[^\p{Lu}]/gu, '').length;
  const bodyWords = (text.match(/\p{L}{3,}/gu) ?? []);
  const shouted = bodyWords.filter((w) => w === w.toUpperCase() && w !== w.toLowerCase()).length;
  if (subjLetters.length >= 6 && subjUpper / subjLetters.length > 0.7) {
    out.push({ code: 'all_caps', level: 'bad', message: 'the subject is in capitals: filters score shouting subjects as spam' });
  } else if (bodyWords.length >= 10 && shouted / bodyWords.length > 0.3) {
    out.push({ code: 'all_caps', level: 'warn', message: `${shouted} of ${bodyWords.length} words in capitals` });
  } else {
    out.push({ code: 'all_caps', level: 'ok', message: 'no shouting' });
  }

  // Spam phrases.
  const hay = ` ${`${subject} ${text} ${html ? htmlText(html) : ''}`.toLowerCase().replace(/\s+/g, ' ')} `;
  const found = SPAM_PHRASES.filter((p) => hasPhrase(hay, p));
  out.push(
    found.length
      ? { code: 'spam_phrases', level: found.length > 2 ? 'bad' : 'warn', message: `spam phrases: ${found.map((p) => `"${p}"`).join(', ')}` }
      : { code: 'spam_phrases', level: 'ok', message: 'no known spam phrases' },
  );

  // Unsubscribe.
  const bodyOptOut = (unsub !== null && (text.includes(unsub) || (html ?? '').includes(unsub))) || /\bunsubscribe\b|\bopt[ -]?out\b|\bnot interested\b/i.test(text);
  if (!i.listUnsubscribe) out.push({ code: 'unsubscribe', level: 'bad', message: 'no List-Unsubscribe header: Gmail and Yahoo require one-click unsubscribe for bulk senders' });
  else out.push({ code: 'unsubscribe', level: 'ok', message: bodyOptOut ? 'one-click unsubscribe header, and an opt-out in the body' : 'one-click unsubscribe header (add {{unsubscribe_url}} or an opt-out line to the body to be safe)' });
  return out;
}

/** `phrase` as whole words in `hay` (lower case, single spaces, padded with a space). */
function hasPhrase(hay: string, phrase: string): boolean {
  let from = 0;
  for (;;) {
    const at = hay.indexOf(phrase, from);
    if (at < 0) return false;
    const before = hay[at - 1] ?? ' ';
    const after = hay[at + phrase.length] ?? ' ';
    if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) return true;
    from = at + 1;
  }
}

/** The worst level among the findings. */
export function worstLevel(findings: Finding[]): FindingLevel {
  return findings.some((f) => f.level === 'bad') ? 'bad' : findings.some((f) => f.level === 'warn') ? 'warn' : 'ok';
}

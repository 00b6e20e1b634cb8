/**
 * HTML → plain text for mail bodies: block elements become line breaks, script/style/head are
 * dropped, entities decoded, runs of white space collapsed as a browser would. A hand-written
 * scanner (indexOf, no backtracking regexes over the whole input) so that hostile HTML, such as
 * thousands of unclosed `<script` or `<!--`, stays linear in time. postal-mime has a converter too,
 * but it is not exported and keeps <style> contents.
 */

const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'center', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure',
  'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'main', 'nav', 'ol', 'pre', 'section', 'table',
  'tbody', 'tfoot', 'thead', 'tr', 'ul', 'body', 'html',
]);
const PARAGRAPH = new Set(['p']);
const SKIP_CONTENT = new Set(['script', 'style', 'head', 'title', 'xml', 'template', 'noscript']);

const TAG_START = /<\s*(\/?)\s*([a-zA-Z][\w:-]{0,63})/y;

const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ensp: ' ', emsp: ' ', thinsp: ' ', shy: '',
  copy: '©', reg: '®', trade: '™', hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', sbquo: '‚',
  ldquo: '“', rdquo: '”', bdquo: '„', laquo: '«', raquo: '»', euro: '€', pound: '£', yen: '¥', cent: '¢',
  sect: '§', para: '¶', middot: '·', bull: '•', deg: '°', plusmn: '±', times: '×', divide: '÷', zwnj: '', zwj: '',
  iexcl: '¡', iquest: '¿', szlig: 'ß', aacute: 'á', agrave: 'à', acirc: 'â', atilde: 'ã', auml: 'ä', aring: 'å',
  aelig: 'æ', ccedil: 'ç', eacute: 'é', egrave: 'è', ecirc: 'ê', euml: 'ë', iacute: 'í', igrave: 'ì', icirc: 'î',
  iuml: 'ï', ntilde: 'ñ', oacute: 'ó', ograve: 'ò', ocirc: 'ô', otilde: 'õ', ouml: 'ö', oslash: 'ø', uacute: 'ú',
  ugrave: 'ù', ucirc: 'û', uuml: 'ü', yacute: 'ý', yuml: 'ÿ', Aacute: 'Á', Agrave: 'À', Acirc: 'Â', Auml: 'Ä',
  Aring: 'Å', AElig: 'Æ', Ccedil: 'Ç', Eacute: 'É', Egrave: 'È', Ecirc: 'Ê', Iacute: 'Í', Ntilde: 'Ñ',
  Oacute: 'Ó', Ouml: 'Ö', Oslash: 'Ø', Uacute: 'Ú', Uuml: 'Ü',
};

export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z][a-z0-9]{1,10});?/gi, (m, body: string) => {
    if (body[0] === '#') {
      const cp = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      // NUL, surrogates and out-of-range code points become U+FFFD, as HTML5 parsers do.
      if (!Number.isFinite(cp) || cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return '\uFFFD';
      return String.fromCodePoint(cp);
    }
    return NAMED[body] ?? NAMED[body.toLowerCase()] ?? m;
  });
}

/** Index just past the closing tag `</name ...>` from `from`, or the end of the input. */
function skipPast(html: string, name: string, from: number): number {
  const re = new RegExp(`</${name}\\b`, 'gi');
  re.lastIndex = from;
  const m = re.exec(html);
  if (!m) return html.length;
  const gt = html.indexOf('>', m.index);
  return gt < 0 ? html.length : gt + 1;
}

export function htmlToText(html: string): string {
  const out: string[] = [];
  const n = html.length;
  let i = 0;
  // The next ">" at or after the current "<", found once and reused: searching again from every
  // "<" is quadratic on a megabyte of "<div" without ">".
  let gtCache = -1;
  const text = (s: string) => {
    if (s) out.push(decodeEntities(/[\t\r\n\f]| {2}/.test(s) ? s.replace(/[ \t\r\n\f]+/g, ' ') : s));
  };
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      text(html.slice(i));
      break;
    }
    text(html.slice(i, lt));
    if (html.startsWith('<!--', lt)) {
      const e = html.indexOf('-->', lt + 4);
      i = e < 0 ? n : e + 3;
      continue;
    }
    if (lt > gtCache) gtCache = html.indexOf('>', lt);
    const gt = gtCache;
    if (gt < 0) {
      // No ">" anywhere after: a literal "<" in text, or an unterminated tag at the end.
      if (!/^<\s*\/?\s*[a-zA-Z]/.test(html.slice(lt, lt + 8))) text(html.slice(lt));
      break;
    }
    TAG_START.lastIndex = lt;
    const m = TAG_START.exec(html);
    if (!m) {
      // "<!DOCTYPE", "<?xml", or a literal "<" in text (up to the next "<")
      if (html[lt + 1] === '!' || html[lt + 1] === '?') {
        i = gt + 1;
      } else {
        const next = html.indexOf('<', lt + 1);
        text(html.slice(lt, next < 0 ? n : next));
        i = next < 0 ? n : next;
      }
      continue;
    }
    const closing = m[1] === '/';
    const name = m[2]!.toLowerCase();
    i = gt + 1;
    if (!closing && SKIP_CONTENT.has(name)) {
      if (html[gt - 1] !== '/') i = skipPast(html, name, gt + 1);
      continue;
    }
    if (name === 'br') out.push('\n');
    else if (name === 'hr') out.push('\n----------\n');
    else if (name === 'li' && !closing) out.push('\n- ');
    else if (name === 'td' || name === 'th') out.push(' ');
    else if (PARAGRAPH.has(name)) out.push('\n\n');
    else if (BLOCK.has(name) || name === 'li') out.push('\n');
  }
  const lines = out.join('').split('\n').map((l) => l.trim());
  const kept: string[] = [];
  for (const l of lines) {
    if (l === '' && (kept.length === 0 || kept[kept.length - 1] === '')) continue;
    kept.push(l);
  }
  while (kept.length && kept[kept.length - 1] === '') kept.pop();
  return kept.join('\n');
}

/**
 * Tags off, contents kept: the fallback reading of HTML that htmlToText rendered empty (an
 * unclosed `<style>` or `<script>` swallows the rest of a broken note, yet its words are there).
 * Closed script/style blocks are dropped; a `<` with no `>` after it stays as text. One pass:
 * each `>` and closing tag is searched for once, so `<script` or `<a href="` repeated a million
 * times costs what a million characters cost (the regexes this replaced took minutes on it).
 */
export function stripTags(html: string): string {
  const out: string[] = [];
  const n = html.length;
  let i = 0;
  let gt = -1;
  // Where the next "</script" and "</style" are, or n when there is none: searched again only
  // once the scan has passed them.
  const close: Record<'script' | 'style', number> = { script: -1, style: -1 };
  const nextClose = (name: 'script' | 'style', from: number): number => {
    if (close[name] !== n && close[name] < from) {
      const re = new RegExp(`</${name}\\s*>`, 'gi');
      re.lastIndex = from;
      const m = re.exec(html);
      close[name] = m ? m.index : n;
    }
    return close[name];
  };
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      out.push(html.slice(i));
      break;
    }
    out.push(html.slice(i, lt));
    if (gt < lt) gt = html.indexOf('>', lt);
    if (gt < 0) {
      out.push(html.slice(lt));
      break;
    }
    const opener = /^<(script|style)\b/i.exec(html.slice(lt, lt + 8));
    if (opener) {
      const name = opener[1]!.toLowerCase() as 'script' | 'style';
      const at = nextClose(name, gt + 1);
      if (at < n) {
        const end = html.indexOf('>', at);
        out.push(' ');
        i = end + 1;
        continue;
      }
    }
    out.push(' ');
    i = gt + 1;
  }
  return decodeEntities(out.join(''));
}

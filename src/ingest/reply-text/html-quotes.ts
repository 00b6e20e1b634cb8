/**
 * Where the quoted history of an HTML reply begins, from the markup that mail clients put
 * around it. Everything from the earliest marker on is history; the part before it is turned
 * into text and goes through the plain-text rules (which also drop the attribution line that
 * clients write just above the quote, and the signature).
 */
const MARKERS: RegExp[] = [
  // Gmail
  /<(?:div|blockquote)\b[^>]{0,2000}\bclass\s*=\s*["']?[^"'>]{0,500}\bgmail_quote\b/i,
  // Yahoo
  /<div\b[^>]{0,2000}\bclass\s*=\s*["']?[^"'>]{0,500}\byahoo_quoted\b/i,
  // Thunderbird: the attribution div, then <blockquote type="cite">
  /<div\b[^>]{0,2000}\bclass\s*=\s*["']?[^"'>]{0,500}\bmoz-cite-prefix\b/i,
  // Apple Mail, Thunderbird, Sparrow
  /<blockquote\b[^>]{0,2000}\btype\s*=\s*["']?cite\b/i,
  // Outlook desktop and web
  /<div\b[^>]{0,2000}\bid\s*=\s*["']?(?:x_)?divRplyFwdMsg\b/i,
  /<[a-z]+\b[^>]{0,2000}\b(?:id|class)\s*=\s*["']?[^"'>]{0,500}\bOutlookMessageHeader\b/i,
  /<div\b[^>]{0,2000}\bstyle\s*=\s*["'][^"']{0,2000}border-top:\s*solid\s*#(?:B5C4DF|E1E1E1)/i,
  // Hotmail
  /<hr\b[^>]{0,2000}\bid\s*=\s*["']?(?:ecx)?stopSpelling\b/i,
  // Any other blockquote (mail.ru, Yandex, many webmails quote this way)
  /<blockquote\b/i,
];

/** Offset of the first quote marker in the HTML, or -1. */
export function htmlQuoteStart(html: string): number {
  let best = -1;
  for (const re of MARKERS) {
    const m = re.exec(html);
    if (m && (best < 0 || m.index < best)) best = m.index;
  }
  return best;
}

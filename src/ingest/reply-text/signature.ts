/**
 * Where the signature of the new text begins. Four kinds, in the order they are tried:
 *   - the delimiter line ("-- " per RFC 3676 §4.3, and the "--" / "__" that clients write instead);
 *   - a mobile or client signature ("Sent from my iPhone", "Get Outlook for iOS", in several languages);
 *   - a closing phrase ("Regards,", "Best,") followed by a few short lines (name, title);
 *   - talon's idea: with the sender known, a short trailing block that holds the sender's name,
 *     with the logo lines and rules just above it.
 * Each returns the index of the first signature line within `lines`, or -1.
 */

const DELIMITER = /^\s*(?:--|__)\s*$/u;

/** "-Abhishek Kona": a dash sign-off that joins the signature when one follows it. */
const DASH_SIGNOFF = /^\s*-\s?\p{L}[\p{L} .'-]{0,40}$/u;

/** A mailing-list footer rule: "_______________________________________________". */
const FOOTER_RULE = /^\s*_{10,}\s*$/u;

export const MOBILE_SIGNATURE =
  /^\s*(?:sent (?:from|with|via|using) (?:my|the|a mobile|outlook|mail|yahoo|samsung|proton|protonmail|bluemail|aol|windows|gmail|spark|superhuman|edison|nine|newton|polymail|sparrow|mailbird|airmail|hey|iphone|ipad|android|blackberry|huawei|xiaomi|my phone)\b|sent from mobile|sent on the go|get outlook for (?:ios|android)|envoyé (?:de|depuis|à partir de) (?:mon|ma|outlook|l'application|yahoo)|obtenir outlook pour|télécharger outlook pour|gesendet (?:von|mit|vom) (?:meinem|meiner|outlook|mobil|yahoo|gmx|web\.de|der)|von meinem \S+(?: \S+)? gesendet|holen sie sich outlook|enviado (?:desde|do|de|a partir do) (?:mi|meu|o meu|outlook|yahoo|correo)|obtener outlook para|inviato da(?:l mio| il mio| iphone| ipad| outlook| samsung| yahoo|ll'app)|verzonden (?:vanaf|met|van) (?:mijn|outlook)|verstuurd vanaf (?:mijn|outlook)|sendt fra (?:min|outlook|yahoo)|skickat från (?:min|outlook|yahoo)|lähetetty (?:iphonesta|androidista|outlookista|puhelimesta|mobiilista)|wysłane z (?:mojego|iphone|ipada|outlooka|aplikacji)|отправлено с (?:моего|iphone|ipad|android|мобильного)|odesláno z (?:mého|iphonu|outlooku))\b[\p{L}\p{N}\s'’&.+/-]{0,60}(?:<[^<>]{0,200}>|\([^()]{0,200}\))?\s*$/iu;

/**
 * Client signatures the list above does not name: "Sent from TypeApp<http://…>", "Sent from Nine",
 * "Get BlueMail for Android". Case-sensitive: the app's name is capitalised, so "sent from the
 * airport, …" is a sentence. A link may follow the name, joined or not. Tested on the trimmed
 * line; no quantifier is nested in another (linear on any input).
 */
/** A link after the app's name ("<http://…>", "(http://…)", a bare URL), taken off before the name is read. */
const TRAILING_LINK = /(?:<[^<>\s]{1,300}>|\([^()\s]{1,300}\)|https?:\/\/\S{1,300})$/u;
const APP_NAME = String.raw`\p{Lu}[\p{L}\p{N}'’ ]{0,60}`;
const CLIENT_SIGNATURE = [
  new RegExp(String.raw`^(?:Sent|SENT|Envoyé|Enviado|Inviato|Gesendet|Verzonden|Skickat|Sendt|Wysłane) (?:from|with|via|using|de|depuis|desde|da|von|mit|vanaf|met|från|fra|z) ${APP_NAME}$`, 'u'),
  new RegExp(String.raw`^Get ${APP_NAME} for (?:Android|iOS|iPhone|iPad|Windows|Mac)$`, 'u'),
  // Japanese and Chinese clients: "iPhoneから送信", "从我的iPhone发送", "发自我的iPhone".
  /^(?:\S{1,20}から送信|(?:从|從)我的\S{1,20}(?:发送|發送)|(?:发自|發自|来自|來自)我的\S{1,20})$/u,
];

/** A name signed "via mobile": "Dana Kim via mobile", "- Dana (via mobile)". Every word of the name capitalised. */
const VIA_MOBILE = /^(?:[-–—] |[-–—])?([^,()]{1,40}),? \(?[Vv]ia (?:mobile|phone|cell|iPhone|iPad|Android|BlackBerry)\)?$/u;

function signedViaMobile(t: string): boolean {
  const m = VIA_MOBILE.exec(t);
  return m !== null && m[1]!.split(' ').every((w) => /^\p{Lu}[\p{L}.'’-]*$/u.test(w));
}

/** A mobile or client signature line ("Sent from my iPhone", "Sent from TypeApp<http://…>"). */
export function isMobileSignature(line: string): boolean {
  if (line.length > 400) return false;
  const t = line.trim();
  const bare = t.replace(TRAILING_LINK, '').trimEnd();
  return MOBILE_SIGNATURE.test(line) || CLIENT_SIGNATURE.some((re) => re.test(bare)) || signedViaMobile(t);
}

const CLOSING =
  /^\s*(?:(?:best|kind|warm|warmest|many|with|all the best|best wishes)?\s*(?:regards|wishes)|best|cheers|thanks|thank you|thanks again|many thanks|thx|sincerely|yours(?: truly| sincerely)?|respectfully|take care|talk soon|mit freundlichen grüßen|viele grüße|beste grüße|liebe grüße|gruß|grüße|lg|mfg|cordialement|bien à vous|bien cordialement|salutations|saludos|un saludo|atentamente|cordiali saluti|saluti|distinti saluti|atenciosamente|abraços|obrigado|obrigada|met vriendelijke groet|groeten|hilsen|med venlig hilsen|vennlig hilsen|mvh|med vänliga hälsningar|hälsningar|ystävällisin terveisin|terveisin|pozdrawiam|z poważaniem|с уважением|спасибо)\s*[,.!]?\s*$/iu;

const SIGNATURE_MAX_LINES = 15;
const SIGNATURE_LINE_MAX_CHARS = 80;

function isBlank(l: string): boolean {
  return l.trim() === '';
}

/** First delimiter or footer rule; a dash sign-off just above it (blank lines between) joins it. */
export function delimiterSignature(lines: string[]): number {
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    // A footer rule counts only near the end; long rules elsewhere are content (markdown, tables).
    if (DELIMITER.test(l) || (FOOTER_RULE.test(l) && lines.length - i <= SIGNATURE_MAX_LINES)) {
      let start = i;
      let j = i - 1;
      while (j >= 0 && isBlank(lines[j]!) && i - j <= 3) j--;
      if (j > 0 && DASH_SIGNOFF.test(lines[j]!)) start = j;
      return start;
    }
  }
  return -1;
}

export function mobileSignature(lines: string[]): number {
  for (let i = 0; i < lines.length; i++) if (isMobileSignature(lines[i]!)) return i;
  return -1;
}

/** "Regards,\n\nJohn Doe\nCEO @ Acme": a closing line, then 1–5 short lines to the end; never the whole reply. */
export function closingSignature(lines: string[]): number {
  const firstText = lines.findIndex((l) => !isBlank(l));
  if (firstText < 0) return -1;
  for (let i = lines.length - 1; i > firstText && lines.length - i <= 8; i--) {
    // CLOSING has two white-space runs in a row: bounded lines keep its backtracking small.
    if (lines[i]!.length > 200 || !CLOSING.test(lines[i]!)) continue;
    const after = lines.slice(i + 1).filter((l) => !isBlank(l));
    // The line under the closing is a name ("John", "Dr. Ann Lee", "李明"), not "see you Monday".
    if (after.length >= 1 && after.length <= 5 && /^\s*[\p{Lu}\p{Lo}]/u.test(after[0]!) && after.every((l) => (l.trim().length <= 60 && !/[.?!:]\s*$/.test(l.trim())) || /@|https?:|www\.|\+?\d[\d ()-]{6,}/.test(l))) return i;
  }
  return -1;
}

/** Words of the sender's display name and mailbox local part, lower-cased, ≥ 3 letters. */
export function senderNameTokens(from: string | null | undefined): string[] {
  if (!from) return [];
  from = from.slice(0, 1000);
  const generic = new Set(['info', 'mail', 'email', 'admin', 'noreply', 'reply', 'support', 'sales', 'contact', 'team', 'hello', 'office', 'the', 'and']);
  const m = /^(.*?)<([^>]*)>/.exec(from);
  const name = m ? m[1]! : from.includes('@') ? '' : from;
  const local = (m ? m[2]! : from.includes('@') ? from : '').split('@')[0] ?? '';
  const words = `${name} ${local.replace(/[._+-]/g, ' ')}`.toLowerCase().match(/\p{L}{3,}/gu) ?? [];
  return [...new Set(words)].filter((w) => !generic.has(w));
}

/** A line of a signature block above the name: blank, a rule, or a short label ("AM_LOGO_CLR"). */
function signatureFiller(l: string): boolean {
  const t = l.trim();
  return t === '' || /^[-_=*~#.]{2,}$/.test(t) || (t.length <= 25 && !/[.!?:;,]$/.test(t) && !/\s\S+\s/.test(t));
}

/** A line that can carry a name in a signature, not a sentence that mentions it ("Thanks John, that works."). */
function nameLike(l: string): boolean {
  const t = l.trim();
  const sentenceEnd = /[.!?:;]$/.test(t) && !/\b(?:ph\.?d|jr|sr|md|esq|inc|ltd|co|gmbh|s\.a|b\.v)\.$/i.test(t);
  return t.length <= 60 && !sentenceEnd && (t.match(/\S+/g) ?? []).length <= 8;
}

export function senderSignature(lines: string[], from: string | null | undefined): number {
  const tokens = senderNameTokens(from);
  if (tokens.length === 0) return -1;
  const firstText = lines.findIndex((l) => !isBlank(l));
  if (firstText < 0) return -1;
  const nameRe = new RegExp(`(?:^|[^\\p{L}])(?:${tokens.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?![\\p{L}])`, 'iu');
  let start = -1;
  let seen = 0;
  for (let i = lines.length - 1; i > firstText; i--) {
    const l = lines[i]!;
    if (isBlank(l)) continue;
    if (++seen > SIGNATURE_MAX_LINES || l.trim().length > SIGNATURE_LINE_MAX_CHARS) break;
    if (nameRe.test(l) && nameLike(l)) start = i;
  }
  if (start < 0) return -1;
  while (start - 1 > firstText && signatureFiller(lines[start - 1]!)) start--;
  while (start < lines.length && isBlank(lines[start]!)) start++;
  return start;
}

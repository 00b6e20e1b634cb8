/**
 * Recognising where the quoted history of a plain-text reply begins: the attribution line
 * ("On … wrote:" in its many languages, possibly wrapped over 2–3 lines), the Outlook separator
 * and header block ("-----Original Message-----", "From: … Sent: … To: … Subject:"), forward
 * markers. Each test looks at the lines from one index on and says how many lines the header
 * spans (0: not a header).
 */

/** The verb that ends an attribution line, by language (Gmail, Apple Mail, Thunderbird, Outlook web). */
const ATTRIBUTION_VERB =
  /(?:wrote|writes|has written|schrieb|geschrieben|geschreven|a écrit|a ecrit|escribió|escribio|ha escrito|escreveu|ha scritto|pisze|napisał\(a\)|napisała|napisał|schreef|skrev|kirjoitti|написал\(а\)|написала|написал|пишет|írta|napsal\(a\)|napsala|napsal|yazdı|έγραψε|scrisse|a scris|kirjutas|rašė|rakstīja|je napisal|napisao|napisala je|написа|đã viết|のメッセージ|menulis|пише|napsal\(a\)|skrifaði|kirjoitti|写道|寫道|より|님이 작성)\s*[:：]?\s*$/iu;

/** Hungarian puts the date after the verb: "Bob <b@x> ezt írta (időpont: 2021. nov. 15., H, 19:42):" */
const VERB_THEN_DATE = /\b(?:ezt írta|wrote|schrieb) \([^()]{0,100}\)\s*[:：]\s*$/iu;

/**
 * The start of an attribution line: a lead word ("On", "Am", "Le", "El", "Il", "Em", "W dniu",
 * "Op", "Den", "Dne", "Il giorno"), a digit (ISO or US date first), or a short weekday
 * abbreviation followed by a date ("pe 20. lokakuuta", "tir. 18. apr.", "ср, 30 апр.").
 */
const ATTRIBUTION_LEAD =
  /^\s*(?:[-=]{2,}\s*)?(?:(?:on|am|le|el|il|em|w dniu|op|den|dne|il giorno|på|sur|el día|no dia|dana|dňa|vào|pada|στις)\s|\d|\p{L}{1,5}\.?,?\s+\d)/iu;

/** A date/time, an address or a bracketed address: an attribution without a verb needs one. */
const HAS_DATE_OR_ADDRESS = /\d[:./-]?\d|@|<[^>]*>/u;

/** "2017-11-24 16:32 GMT+01:00 Name <a@b>:" or "ср, 30 апр. 2025 г. в 15:19, Name <a@b>:" */
const ADDRESS_THEN_COLON = /(?:<[^<>\s@]+@[^<>\s@]+>\)?|[^<>\s@]+@[^<>\s@:：]+)\s*[:：]\s*$/u;

/** No header, separator or rule is longer; longer lines are not tested (regex cost on hostile input). */
export const MAX_SIGNAL_LINE = 1000;

const MAX_HEADER_CHARS = 400;

/** Lines [i, i+k) joined, k = 1..3, consecutive non-blank lines only. */
function joined(lines: string[], i: number, k: number): string | null {
  if (i + k > lines.length) return null;
  const part = lines.slice(i, i + k);
  // ">:" alone is the end of a wrapped "<addr\n>:", not a quoted line.
  if (part.some((l, j) => l.trim() === '' || (/^\s*>/.test(l) && !(j > 0 && /^\s*>\s*:\s*$/.test(l))))) return null;
  return part.map((l) => l.trim()).join(' ');
}

/** A verb in the middle, the name after it: "Am 1. März schrieb Max Muster <m@x>:", "… skrev Test <t@x\n>:". */
const MID_VERB =
  /\b(?:schrieb|skrev|schreef|pisze|napisał|escribió|a écrit|wrote|kirjoitti|написал|написала|scrisse|escreveu|ha scritto)\b.{0,200}:\s*$/iu;

/** "On Tue, 1 Mar 2011, Jane <j@x> wrote:", wrapped or not; also the verb-less date + address form. */
export function attributionAt(lines: string[], i: number): number {
  const first = lines[i] ?? '';
  if (first.trim() === '' || /^\s*>/.test(first)) return 0;
  const lead = ATTRIBUTION_LEAD.test(first);
  for (let k = 1; k <= 3; k++) {
    const s = joined(lines, i, k);
    if (s === null || s.length > MAX_HEADER_CHARS) return 0;
    // A wrapped header has to start like one; a one-line header may start with a name.
    if (k > 1 && !lead) return 0;
    // A sentence that merely ends in "wrote:" ("here is what she wrote:") is no header: it
    // must hold a date, a time or an address.
    if (!HAS_DATE_OR_ADDRESS.test(s)) continue;
    // Zoho and some webmails frame it: "---- On Mon, 01 Jan 2020 Bob <b@x> wrote ----", "==== … ===="
    const t = s.replace(/^[-=]{2,}\s*|\s*[-=]{2,}$/g, '');
    if (ATTRIBUTION_VERB.test(t) && (/[:：]\s*$/.test(t) || ((lead || t !== s) && /\d/.test(t)))) return k;
    if (VERB_THEN_DATE.test(s)) return k;
    if (lead && MID_VERB.test(s)) return k;
    if (ADDRESS_THEN_COLON.test(s) && /\d/.test(s)) return k;
  }
  return 0;
}

/** "-----Original Message-----" and its translations, forward markers, "Begin forwarded message:". */
const SEPARATOR =
  /^\s*(?:[-_=*]{2,}\s*)?(?:original message|mail original|ursprüngliche nachricht|originalnachricht|original-nachricht|originalmeddelande|oprindelig meddelelse|元のメッセージ|原始邮件|原始郵件|原邮件|message d'origine|message original|mensaje original|messaggio originale|mensagem original|oorspronkelijk bericht|origineel bericht|oprindelig besked|opprinnelig melding|original meddelelse|ursprungligt meddelande|alkuperäinen viesti|wiadomość oryginalna|oryginalna wiadomość|исходное сообщение|původní zpráva|eredeti üzenet|orijinal mesaj|forwarded message|weitergeleitete nachricht|message transféré|mensaje reenviado|messaggio inoltrato|mensagem encaminhada|doorgestuurd bericht|videresendt meddelelse|videresendt melding|vidarebefordrat meddelande|välitetty viesti|wiadomość przekazana dalej|пересылаемое сообщение|переслано)\s*(?:[-_=*]{2,}\s*)?(?::\s*)?$/iu;

const FORWARD_LEAD =
  /^\s*(?:begin forwarded message|anfang der weitergeleiteten nachricht|début du message réexpédié|début du message transféré|inicio del mensaje reenviado|comienzo del mensaje reenviado|inizio messaggio inoltrato|início da mensagem reencaminhada|begin doorgestuurd bericht|start på videresendt meddelelse|början på vidarebefordrat meddelande)\s*:?\s*$/iu;

/**
 * Markers that helpdesks and forums put above the history they quote: "##- Please type your
 * reply above this line -##" (Zendesk and others), "*Previous Replies*" (Discourse).
 */
const HISTORY_MARKER =
  /^\s*(?:[#*_-]+\s*)?(?:(?:please )?(?:type|write|enter) your (?:reply|response|answer) above this line|reply above this line|(?:previous replies|vorherige antworten|réponses précédentes|respuestas anteriores|risposte precedenti|respostas anteriores|eerdere antwoorden))[\s.:#*_-]*$/iu;

/** "Message du : 12/12/2016 13:20" alone on its line: only French webmails' quote header reads so, whatever follows it. */
const MESSAGE_OF_LINE = /^\s*message du ?:? ?\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4},? (?:à )?\d{1,2}[:h]\d{2}(?::\d{2})?\s*$/iu;

export function separatorAt(lines: string[], i: number): number {
  const l = lines[i] ?? '';
  if (l.length > MAX_SIGNAL_LINE) return 0;
  return SEPARATOR.test(l) || FORWARD_LEAD.test(l) || HISTORY_MARKER.test(l) || MESSAGE_OF_LINE.test(l) ? 1 : 0;
}

/** Header names of a quoted header block, by language; the value follows a colon. */
const FROM_FIELD = /^\s*\*?(?:from|von|de|da|van|fra|från|od|от|lähettäjä|kimden|feladó|mittente|remitente|afzender|expéditeur|absender|wysłane przez|enviado por|από|差出人|发件人|寄件者|보낸 사람)\s*[:：]\*?\s*\S?/iu;
const OTHER_FIELD =
  /^\s*\*?(?:sent|date|to|cc|subject|copie à|envoyé le|enviado el|enviada em|enviado em|inviato il|gesendet|datum|an|betreff|envoyé|à|objet|enviado|enviada|fecha|para|asunto|assunto|data|inviato|a|oggetto|verzonden|aan|onderwerp|sendt|dato|til|emne|skickat|till|ämne|wysłano|do|temat|отправлено|дата|кому|тема|копия|lähetetty|päivämäärä|vastaanottaja|aihe|gönderildi|tarih|kime|konu|elküldve|dátum|címzett|tárgy|odesláno|komu|předmět|στάλθηκε|προς|θέμα|送信日時|宛先|件名|日付|发送时间|收件人|主题|日期|寄件日期|收件者|主旨|보낸 날짜|받는 사람|제목)\s*[:：]\*?/iu;

/**
 * An Outlook-style header block: header fields on consecutive lines, one of them From, three
 * fields in all (two when the From line holds an address). Outlook starts with From; Hotmail
 * and MSN with Date. A field's value may be wrapped onto the next line
 * ("From: Human Resources \n<hr@x>").
 */
/** French webmails (Orange, La Poste, SFR) open the block with "Message du : 12/12/2016 13:20" or "Message du 12/12/16 13:20". */
const MESSAGE_OF = /^\s*message du ?:? ?\d/iu;

export function headerBlockAt(lines: string[], i: number): number {
  const isField = (l: string) => FROM_FIELD.test(l) || OTHER_FIELD.test(l) || MESSAGE_OF.test(l);
  if ((lines[i]?.length ?? 0) > MAX_SIGNAL_LINE || !isField(lines[i] ?? '')) return 0;
  let fields = 0;
  let fromWithAddress = false;
  let hasFrom = false;
  let continuations = 0;
  let end = i;
  for (let j = i; j < Math.min(lines.length, i + 10); j++) {
    const l = lines[j]!;
    if (l.length > MAX_SIGNAL_LINE) break;
    if (isField(l)) {
      fields++;
      end = j + 1;
      if (FROM_FIELD.test(l)) {
        hasFrom = true;
        fromWithAddress ||= /@|\[mailto:/i.test(l) || /@/.test(lines[j + 1] ?? '');
      }
    } else if (l.trim() !== '' && j === end && continuations < 2 && l.length < 200) {
      continuations++;
      end = j + 1;
    } else break;
  }
  return hasFrom && (fields >= 3 || (fields >= 2 && fromWithAddress)) ? end - i : 0;
}

/** A line of underscores or dashes (or a short one of `=`, as some webmails draw it) just above an Outlook header block. */
const RULE_LINE = /^\s*(?:_{10,}|-{10,}|={3,}|\*{10,})\s*$/u;

export function ruleBeforeHeaderAt(lines: string[], i: number): number {
  if (!RULE_LINE.test(lines[i] ?? '')) return 0;
  for (let j = i + 1; j < Math.min(lines.length, i + 4); j++) {
    if (lines[j]!.trim() === '') continue;
    return headerBlockAt(lines, j) > 0 ? 1 : 0;
  }
  return 0;
}

export type BoundaryKind = 'attribution' | 'block';

/** Where quoted history begins at line i, and of which kind; null when it does not. */
export function boundaryAt(lines: string[], i: number): { kind: BoundaryKind; span: number } | null {
  if ((lines[i]?.length ?? 0) > MAX_SIGNAL_LINE) return null;
  const a = attributionAt(lines, i);
  if (a) return { kind: 'attribution', span: a };
  const s = separatorAt(lines, i) || ruleBeforeHeaderAt(lines, i) || headerBlockAt(lines, i);
  if (s) return { kind: 'block', span: s };
  return null;
}

import { TEXT_LIMITS } from '../../parse/limits.ts';

/**
 * "Please remove me": opt-out requests in the new text of a reply, by phrase rules in several
 * languages. Rules match whole words in text whose punctuation is folded to spaces ("Stop. Emailing.
 * Me." reads as "stop emailing me"), so "stop" inside "non-stop", "stop by our booth" or "don't stop"
 * never counts; a bare "stop" or "remove" counts only when it is the whole sentence. The caller passes
 * only new text: a quoted footer's "unsubscribe" link never reaches these rules.
 */

export interface UnsubscribeRequest {
  confidence: number;
  reason: string;
}

const L = '(?<![\\p{L}\\p{N}])';
const R = '(?![\\p{L}\\p{N}])';
const NOT = "(?<!(?:don't|dont|do not|never|won't|wont|not|didn't|didnt) )";

/** Phrases that ask to stop being mailed, whichever sentence they sit in. */
const PHRASES: RegExp[] = [
  // en
  `${NOT}(?:unsubscribe|unsub|opt me out|opt out|opt-out|optout)(?! (?:rate|rates|ratio|requests|numbers|metrics|handling|compliance|logic|feature|features|process|flow|page design))`,
  "i(?: have|'ve|ve)?(?: already)? unsubscribed",
  `${NOT}remove (?:me|us|myself|my (?:e ?mail|address|email address|name|details|contact|contact details|info|information|data)|this (?:e ?mail|email address|address|contact))`,
  'take (?:me|us|my (?:e ?mail|address|name)) off',
  '(?:be|been|get|getting|being) removed from', 'removed me from', 'removal from (?:your|the|this|all)',
  'remove from (?:your |the |this |all )?(?:list|lists|mailing list|database|distribution)',
  `${NOT}(?:stop|quit|cease) (?:e ?mailing|emailing|contacting|messaging|spamming|writing to|sending (?:me|us|these|this|emails|e ?mails|messages)|reaching out)`,
  'cease (?:all )?(?:communication|communications|contact|correspondence)',
  "(?:do not|don't|dont|never|please don't) (?:e ?mail|email|contact|message|write to|reach out to|send) (?:me|us|this)",
  'do not (?:contact|email) (?:list|register)', 'do-not-contact',
  'no more (?:e ?mails|emails|messages|mails)', 'leave me alone',
  '(?:delete|erase) (?:my|all my) (?:e ?mail|email address|address|data|details|contact|contact details|personal data|information|info)',
  '(?:add|put) me (?:to|on) your do not',
  // de
  'austragen', 'tragen sie mich (?:\\p{L}+ ){0,4}aus', 'abmelden', 'abbestellen', 'melden sie mich (?:\\p{L}+ ){0,4}ab', 'nehmen sie mich (?:\\p{L}+ ){0,4}(?:raus|heraus)',
  '(?:entfernen|löschen|streichen) sie (?:mich|meine (?:adresse|e ?mail adresse|daten))', 'aus (?:ihrem|dem|diesem) verteiler',
  'keine (?:weiteren )?(?:e ?mails|mails|nachrichten|werbung) mehr', 'keine weiteren (?:e ?mails|mails|nachrichten)',
  'nicht mehr (?:kontaktieren|anschreiben|schreiben|anmailen)',
  // fr
  'désabonner', 'désabonnez', 'désinscrire', 'désinscrivez', 'retirez moi', 'me retirer de', 'supprimez (?:moi|mon adresse|mes données)',
  "ne plus m[' ]?(?:écrire|envoyer|contacter)", 'ne plus me (?:contacter|écrire|solliciter)', 'plus de (?:mails|e mails|emails|messages) (?:svp|s il vous plaît|merci)',
  // es
  'dar(?:me|se)? de baja', '(?:dame|dadme|denme|deme|danos|dadnos) de baja', 'no me (?:escribas|escriban|escriba|contactes|contacten|contacte|envíes|envíen|envíe|mandes|manden) más',
  'elimíname', 'eliminarme', 'elimínenme', 'quítame de', 'quitarme de', 'cancelar (?:la |mi )?suscripción', 'desuscribir(?:me)?', 'darme de baja',
  // it
  'cancellatemi', 'cancellami', 'rimuovetemi', 'rimuovermi', 'rimuovimi', 'disiscrivere', 'disiscrivetemi', 'non (?:mi )?(?:scrivete|scrivetemi|contattate|contattatemi|inviate) più',
  // pt
  'remova me', 'removam me', 'remover me', 'descadastr\\p{L}*', 'cancelar (?:a )?inscrição', 'não (?:me )?(?:envie|enviem|mande|mandem|contacte|contactem) mais', 'tirem me',
  // nl
  'uitschrijven', 'schrijf (?:mij|me) uit', 'verwijder (?:mij|me|mijn (?:e ?mail|adres|gegevens))', 'geen (?:e ?mails|mails|berichten) meer',
  // sv, da, no
  'avregistrera', 'avsluta prenumeration', 'ta bort mig', 'afmeld', 'fjern mig', 'meld meg av', 'fjern meg', 'avmeld',
  // pl
  'wypisz mnie', 'wypiszcie mnie', 'usuń mnie', 'usuńcie mnie', 'proszę (?:więcej )?nie pisać', 'rezygnuję z subskrypcji',
].map((p) => (typeof p === 'string' ? new RegExp(`${L}(?:${p})${R}`, 'iu') : p));

/** Whole sentences that are an opt-out on their own ("STOP", "Remove.", "Unsubscribe please"). */
const BARE = /^(?:please |pls |plz )?(?:stop|remove|unsubscribe|unsub|opt out|stop it|remove me|stop now|no more)(?: please| now| thanks| thank you)?$/iu;

function fold(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[’‘`´]/g, "'")
    .replace(/(?<![\p{L}])'|'(?![\p{L}])/gu, ' ') // quotes, not apostrophes
    .replace(/[^\p{L}\p{N}'\s]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function unsubscribeRequest(fullText: string): UnsubscribeRequest | null {
  // Each phrase is a linear scan, and there are ~80: the opening of the reply is read (TEXT_LIMITS).
  const newText = fullText.length > TEXT_LIMITS.unsubscribeChars ? fullText.slice(0, TEXT_LIMITS.unsubscribeChars) : fullText;
  const folded = fold(newText);
  if (!folded) return null;
  for (const re of PHRASES) {
    const m = re.exec(folded);
    if (m) return { confidence: 0.95, reason: `unsubscribe phrase "${m[0]}"` };
  }
  for (const sentence of newText.split(/[.!?\n;]+/u)) {
    const s = fold(sentence);
    if (s && BARE.test(s)) return { confidence: 0.9, reason: `unsubscribe: "${s}" on its own` };
  }
  return null;
}

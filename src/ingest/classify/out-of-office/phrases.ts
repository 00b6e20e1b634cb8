/**
 * What out-of-office notes say, per language. Three strengths:
 *  - SUBJECT: the subject line autoresponders write ("Automatic reply: …", "Abwesenheitsnotiz").
 *  - ABSENT: a present- or future-tense "I am away" in the note's first lines. Past tense ("I was
 *    out last week") is deliberately absent: a human back at the desk writes that.
 *  - AUTO: words only a responder writes ("limited access to email", "upon my return", "this is an
 *    automatic reply"); they turn an ABSENT phrase into strong evidence.
 */

const L = '(?<![\\p{Script=Latin}\\p{N}])';
const R = '(?![\\p{Script=Latin}\\p{N}])';
const GAP = "[^!?\\n。]{0,48}?"; // a few words within one sentence ("ich bin bis zum 3.12. nicht im Büro")
const word = (alts: string[]) => new RegExp(`${L}(?:${alts.join('|')})${R}`, 'iu');

export const SUBJECT = word([
  'out of (?:the )?office', 'ooo', 'o\\.o\\.o\\.', 'automatic reply', 'auto(?:matic)?[- ]?(?:reply|response|responder)', 'autoreply',
  'vacation (?:reply|response|notice)', 'away from (?:the|my) (?:office|desk)', 'away until', 'on (?:annual |parental |maternity )?leave', 'on vacation', 'on holiday',
  'abwesenheitsnotiz', 'abwesenheit', 'abwesend', 'automatische antwort', 'nicht im büro', 'außer haus',
  'réponse automatique', 'reponse automatique', "message d['’]absence", 'absent(?:e)?', 'absence',
  'respuesta automática', 'respuesta automatica', 'fuera de la oficina', 'ausente', 'de vacaciones',
  'risposta automatica', 'fuori ufficio', 'assente', 'in ferie',
  'resposta automática', 'resposta automatica', 'fora do escritório', 'ausência', 'de férias',
  'afwezig', 'afwezigheid', 'automatisch antwoord', 'niet op kantoor', 'met vakantie',
  'frånvaro', 'frånvarande', 'autosvar', 'automatiskt svar', 'automatisk svar', 'fravær', 'fraværende', 'ikke på kontoret',
  'nieobecność', 'nieobecny', 'nieobecna', 'automatyczna odpowiedź', 'odpowiedź automatyczna', 'poza biurem',
  '不在', '自動応答', '自動返信', '休暇', '自动回复', '自動回覆', '休假', '外出', '出差', '不在办公室',
]);

export const ABSENT = [
  // en
  new RegExp(`${L}(?:i am|i'm|i’m|im|i will be|i'll be|i’ll be|i shall be)(?: currently| now| presently)?${GAP}(?:out of (?:the )?office|ooo|on (?:annual |parental |maternity |paternity |sick |medical |study |compassionate )?leave|on (?:vacation|holidays?|pto|sabbatical|a business trip|business travel)|off (?:work|sick)|out sick|attending (?:a |an |the )?(?:conference|trade ?show|training|course|workshop|offsite|off-site)|not in the office|out until)${R}`, 'iu'),
  new RegExp(`${L}(?:currently|presently) (?:out of (?:the )?office|on (?:annual )?leave|on vacation|on holiday)${R}`, 'iu'),
  // de
  new RegExp(`${L}(?:ich bin|bin ich|ich befinde mich|befinde ich mich)${GAP}(?:nicht im büro|nicht im hause|außer haus|abwesend|im urlaub|in urlaub|nicht erreichbar|auf dienstreise|im mutterschutz|in elternzeit|krank|nicht am arbeitsplatz)${R}`, 'iu'),
  // fr
  new RegExp(`${L}(?:je suis|je serai)${GAP}(?:absente?|en congés?|en vacances|en déplacement|hors du bureau|indisponible|en arrêt|en formation)${R}`, 'iu'),
  // es
  new RegExp(`${L}(?:estoy|estaré|estare|me encuentro)${GAP}(?:fuera de (?:la )?oficina|de vacaciones|ausente|de viaje|fuera|de baja|de permiso)${R}`, 'iu'),
  // it
  new RegExp(`${L}(?:sono|sarò|saro|mi trovo)${GAP}(?:fuori ufficio|in ferie|assente|in vacanza|in trasferta|fuori sede)${R}`, 'iu'),
  // pt
  new RegExp(`${L}(?:estou|estarei|encontro-me|me encontro)${GAP}(?:fora do escritório|de férias|ausente|fora|em viagem|de licença)${R}`, 'iu'),
  // nl
  new RegExp(`${L}(?:ik ben|ben ik)${GAP}(?:afwezig|met vakantie|op vakantie|niet op kantoor|niet aanwezig|niet bereikbaar|vrij)${R}`, 'iu'),
  // sv, da, no
  new RegExp(`${L}(?:jag är|jeg er)${GAP}(?:ledig|på semester|bortrest|inte på kontoret|tjänstledig|föräldraledig|på ferie|ikke på kontoret|fraværende|borte|på tjenestereise|syg|sykmeldt)${R}`, 'iu'),
  // pl
  new RegExp(`${L}(?:jestem|będę)${GAP}(?:na urlopie|poza biurem|nieobecn[ya]|niedostępn[ya]|w delegacji)${R}`, 'iu'),
  // ja, zh
  /(?:不在にしております|不在にしています|不在です|休暇を(?:いただいて|取って)|休暇中|出張中|外出中|我(?:正在|目前|现在)?(?:休假|出差|外出|不在办公室)|休假中|出差中)/u,
];

/**
 * Absences people also mention in passing ("I'm travelling to Berlin for your conference"): they
 * count only together with responder wording, a stated return date or a responder's subject.
 */
export const ABSENT_WEAK = [
  new RegExp(`${L}(?:i am|i'm|i’m|im|i will be|i'll be|i’ll be)(?: currently| now| presently)?${GAP}(?:away(?! from home)|travell?ing|unavailable|out of town|out)${R}`, 'iu'),
  new RegExp(`${L}(?:currently|presently) (?:away|travell?ing|unavailable)${R}`, 'iu'),
];

export const AUTO = [
  word([
    'this is an? (?:automatic|automated|auto-generated) (?:reply|response|message)', 'automatic reply',
    'limited (?:access to )?(?:my )?(?:e-?mails?|internet|connectivity)', 'no (?:access to )?(?:my )?e-?mails?', 'for anything urgent', 'in urgent cases', 'if (?:it|anything|something) is urgent', '(?:upon|on|after) my return', 'when i (?:return|get back|am back)',
    'for (?:urgent|immediate|pressing) (?:matters|enquiries|inquiries|requests|questions|assistance)', 'if (?:this|your (?:matter|request) )?is urgent',
    'will (?:respond|reply|get back to you|answer) (?:to your (?:e-?mail|message) )?(?:as soon as|when|upon|on my)',
    'your (?:e-?mail|message) will not be forwarded',
    'in dringenden fällen', 'nach meiner rückkehr', 'eingeschränkt', 'keinen zugriff', 'ihre (?:e-?mail|nachricht) wird nicht weitergeleitet', 'wenden sie sich',
    'en cas d[\'’]urgence', 'à mon retour', 'accès limité', 'message automatique',
    'en caso de urgencia', 'a mi regreso', 'a mi vuelta', 'acceso limitado', 'mensaje automático',
    'per urgenze', 'in caso di urgenza', 'al mio rientro', 'al mio ritorno', 'accesso limitato',
    'em caso de urgência', 'no meu regresso', 'quando regressar', 'acesso limitado',
    'in dringende gevallen', 'bij spoed', 'na mijn terugkeer', 'beperkt toegang',
    'vid brådskande ärenden', 'i brådskande ärenden', 'i akutte tilfælde', 'ved hastesaker', 'begrænset adgang', 'begränsad tillgång',
    'w pilnych sprawach', 'po powrocie', 'ograniczony dostęp',
  ]),
  /(?:自動応答|自動返信|自动回复|自動回覆|急ぎの|緊急の|紧急|緊急|返回后|回来后|回來後)/u,
];

/**
 * A human answering about the pitch, not a responder: "I'm out of office now, but yes, interested —
 * will send times when I'm back". Without a responder's subject or an Auto-Submitted header, such
 * words overrule the body's absence and responder wording.
 */
export const CONVERSATIONAL = word([
  'interested', 'sounds (?:good|great|interesting)', "let'?s (?:talk|chat|connect|set|schedule|book|do|meet|find|discuss)", 'let us (?:talk|meet)',
  'happy to (?:chat|talk|connect|meet|take a look|hop on)', 'call me', 'send (?:me|over) (?:some |a few )?(?:times|details|info|pricing|the deck)',
  'not (?:a fit|interested|relevant)', 'unsubscribe', 'remove me',
  'interessiert', 'intéressé', 'interesado', 'interessato', 'interessado', 'geïnteresseerd', 'intresserad', 'interesseret', 'zainteresowany',
]);

/**
 * Words a responder writes to say it is one. Without a responder's subject or header, they keep a
 * note a note even when it quotes the message it answers or asks something ("Need help? …").
 */
export const EXPLICIT_AUTO = word([
  'this is an? (?:automatic|automated|auto-generated|automatically generated) (?:reply|response|message|e-?mail|notification)', 'automatic reply', 'automated (?:reply|response)', 'auto-?reply',
  'diese (?:e-?mail|nachricht) wurde automatisch', 'automatische antwort', 'automatisch generiert',
  'message automatique', 'réponse automatique', 'reponse automatique', 'ceci est une réponse automatique',
  'respuesta automática', 'respuesta automatica', 'mensaje automático', 'mensaje automatico',
  'risposta automatica', 'messaggio automatico', 'resposta automática', 'resposta automatica', 'mensagem automática',
  'automatisch antwoord', 'automatisch gegenereerd', 'autosvar', 'automatiskt svar', 'automatisk svar', 'automatyczna odpowiedź',
]);

/**
 * A person talking to the reader about this conversation: proposing a time, asking for
 * something, answering or passing the message on, putting the answer off to a day of their own.
 * Responders address everyone alike and say "upon my return", not "can we do Thursday".
 * Checked on the new text's opening; each alternative is plain words (linear to match).
 */
export const PERSONAL = [
  // en
  word([
    '(?:can|could|shall|should|would) (?:we|you)', "let'?s", 'let us', '(?:call|ping|text|email) me', 'send (?:me|over|it)', 'reach out (?:then|again|after|next)',
    '(?:circle|check|come) back', 'reschedule', 'push (?:our|the) (?:call|meeting|demo)', 'this looks', 'looks (?:good|great|relevant|interesting|useful)', "it'?s interesting",
    '(?:forward|forwarding|passing|pass) (?:this|it)', "cc'?d", 'quick answer', 'sorry for the (?:delay|late reply|slow reply|late response)', 'i looked at', 'who else', 'would be better',
    '(?:monday|tuesday|wednesday|thursday|friday|tomorrow|next week) works', 'works for (?:me|a call|us)', '(?:review|reply|respond|look at (?:it|this)|check)(?: properly| again)? then',
    'the (?:deck|demo|proposal|contract|pricing|one-pager|price)', 'your (?:deck|demo|proposal|contract|pricing|one-pager|product|platform|offer)', '(?:at|around) \\d{1,2}(?::\\d\\d)? ?(?:am|pm)',
    'my colleague \\p{Lu}\\p{L}+ can', 'he runs', 'she runs', 'who owns this',
  ]),
  // fr
  word(['pouvez-vous', 'pourriez-vous', 'pouvons-nous', 'on peut', 'envoyez-moi', 'recontacter', 'je reviens vers vous', 'si cela vous convient', "s'appeler", 'un appel', 'votre (?:documentation|proposition|offre|produit|devis)', 'à \\d{1,2} ?h']),
  // de
  word(['können wir', 'könnten wir', 'lassen sie uns', 'schicken sie mir', 'senden sie mir', 'schaue mir das', 'rufen sie mich', 'telefonat', 'telefonieren', 'verschieben', 'vorab']),
  // es
  word(['podemos', 'podríamos', 'le parece', 'te parece', 'me viene bien', 'le escribo', 'te escribo', 'la propuesta', 'nuestros comentarios', 'la demo', 'la llamada']),
  // nl
  word(['kunnen we', 'plannen we', 'stuur', 'de offerte', 'bellen', 'een demo']),
  // pt
  word(['podemos', 'pode me', 'pode enviar', 'a proposta', 'fale com', 'marcar uma']),
  // it
  word(['possiamo', 'ti chiamo', 'la chiamo', 'ti ricontatto', 'sentirci', 'fissare', 'una call']),
];

/** A question to the reader ("Can we do Thursday?", "¿Podemos hablar?"); not the "?" inside a URL. */
export const QUESTION = /\?(?=\s|$)|¿/u;

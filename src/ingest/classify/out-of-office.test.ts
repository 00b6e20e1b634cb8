import { describe, expect, it } from 'vitest';
import type { ParsedMail } from '../types.ts';
import { detectOutOfOffice } from './out-of-office.ts';

const FRI = Date.UTC(2026, 10, 27, 16, 30);

function mail(subject: string, text: string, extra: Partial<ParsedMail> = {}): ParsedMail {
  return {
    messageId: '<m@x>', inReplyTo: '<sent@cadenza>', references: [], subject,
    from: { address: 'p@prospects.test', name: '' }, to: [], cc: [], replyTo: [], returnPath: 'p@prospects.test',
    date: FRI, headers: [], contentType: 'text/plain', text, html: null, parts: [], size: text.length, ...extra,
  };
}
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

describe('detectOutOfOffice: notes in many languages', () => {
  const notes: Array<[subject: string, body: string, returnDate: string | null]> = [
    ['Automatic reply: Quick question about your pipeline', "I'm out of the office until Monday, December 7 with limited access to email.", '2026-12-07' /* English until: back on the 7th */],
    ['Out of Office: Quick question', 'Thank you for your email. I am on annual leave and will be back on 3 December.', '2026-12-03'],
    ['Autoreply: Re: Intro', 'I am currently away, returning 2026-12-10. For urgent matters please contact jane@acme.test.', '2026-12-10'],
    ['Abwesenheitsnotiz: Kurze Frage', 'Vielen Dank für Ihre Nachricht. Ich bin bis zum 03.12.2026 nicht im Büro. In dringenden Fällen wenden Sie sich an …', '2026-12-04'],
    ['Réponse automatique : Question rapide', "Bonjour, je suis absent jusqu'au 3 décembre. Votre message ne sera pas transféré.", '2026-12-04'],
    ['Respuesta automática: Pregunta', 'Hola, estoy fuera de la oficina hasta el 3 de diciembre, con acceso limitado al correo.', '2026-12-04'],
    ['Risposta automatica: Domanda', 'Sono fuori ufficio fino al 3 dicembre. Per urgenze contattare …', '2026-12-04'],
    ['Resposta automática: Pergunta', 'Estou de férias até 3 de dezembro. Em caso de urgência contacte …', '2026-12-04'],
    ['Afwezig: Korte vraag', 'Ik ben afwezig tot 3 december. Bij spoed kunt u bellen met …', '2026-12-04'],
    ['Frånvaro: Snabb fråga', 'Jag är ledig till och med 6 december. Vid brådskande ärenden kontakta …', '2026-12-07'],
    ['Automatisk svar: Spørgsmål', 'Jeg er på ferie til og med 6. december.', '2026-12-07'],
    ['Fravær', 'Jeg er tilbake mandag 7. desember.', '2026-12-07'],
    ['Automatyczna odpowiedź: Pytanie', 'Jestem na urlopie do 4 grudnia. W pilnych sprawach proszę o kontakt …', '2026-12-07' /* through Friday: back Monday */],
    ['不在のお知らせ', 'お問い合わせありがとうございます。12月3日まで不在にしております。12月4日より出社いたします。', '2026-12-04'],
    ['自动回复: 问题', '您好，我正在休假，将于12月8日返回。', '2026-12-08'],
    ['OOO until 12/03', 'Hi, I am out of office.', '2026-12-03'],
    ['Away until May 5', 'I am currently away returning to the office on May 5th.', '2027-05-05' /* "returning on" outranks the subject's "until" */],
  ];
  it.each(notes)('%s', (subject, body, returnDate) => {
    const r = detectOutOfOffice(mail(subject, body), body);
    expect(r).not.toBeNull();
    expect(r!.confidence).toBeGreaterThanOrEqual(0.9);
    expect(r!.returnDate).toBe(returnDate === null ? null : day(returnDate));
  });

  it('reads weaker absence words when a responder wording or a return date backs them', () => {
    const body = 'Hello, I am travelling until 4 December with limited access to email.';
    expect(detectOutOfOffice(mail('Re: Quick question', body), body)).toMatchObject({ returnDate: day('2026-12-04') });
    const bare = "I'm travelling this week.";
    expect(detectOutOfOffice(mail('Re: Quick question', bare), bare)).toBeNull();
  });

  it('reads full notes as responders write them', () => {
    const gmail = 'Hi there,\n\nThanks for your email. I am currently out of the office on annual leave, returning on Monday 7th December.\nDuring this time I will have limited access to my emails. For anything urgent, please contact support@acme.test.\n\nKind regards,\nJo';
    expect(detectOutOfOffice(mail('Re: Quick question', gmail), gmail)).toMatchObject({ confidence: 0.9, returnDate: day('2026-12-07') });
    const outlookDe = 'Sehr geehrte Damen und Herren,\n\nvielen Dank für Ihre E-Mail. Ich befinde mich bis einschließlich 4. Dezember 2026 im Urlaub. Ihre Nachricht wird nicht weitergeleitet. In dringenden Fällen wenden Sie sich bitte an info@firma.test.\n\nMit freundlichen Grüßen';
    expect(detectOutOfOffice(mail('Automatische Antwort: Kurze Frage', outlookDe), outlookDe)).toMatchObject({ confidence: 0.97, returnDate: day('2026-12-07') }); // through Friday the 4th: back Monday
    const fr = "Bonjour,\nJe suis actuellement en congés et serai de retour le lundi 7 décembre. En cas d'urgence, merci de contacter mon collègue.\nCordialement";
    expect(detectOutOfOffice(mail('Absence du bureau', fr), fr)).toMatchObject({ returnDate: day('2026-12-07') });
  });

  it('reads a note whose subject is the original one (Gmail vacation responder) from its first lines', () => {
    const body = 'Hi,\n\nI am out of the office until December 4 and will have limited access to email. I will respond upon my return.\n\nBest, Sam';
    const r = detectOutOfOffice(mail('Re: Quick question', body), body);
    expect(r).toMatchObject({ returnDate: day('2026-12-04') });
    expect(r!.confidence).toBeGreaterThanOrEqual(0.85);
  });

  it('gives a body-only absence without responder wording a lower confidence', () => {
    const body = 'I am on parental leave.';
    expect(detectOutOfOffice(mail('Re: Quick question', body), body)!.confidence).toBeLessThan(0.85);
  });

  it('takes the Date header as the reference, else the given now, else states no date', () => {
    const body = 'I am out of the office until Tuesday.';
    expect(detectOutOfOffice(mail('Out of office', body), body)!.returnDate).toBe(day('2026-12-01'));
    expect(detectOutOfOffice(mail('Out of office', body, { date: null }), body, Date.UTC(2026, 11, 9))!.returnDate).toBe(day('2026-12-15'));
    expect(detectOutOfOffice(mail('Out of office', body, { date: null }), body)!.returnDate).toBeNull();
  });

  it("reads relative dates on the writer's calendar day, from the Date header's offset", () => {
    // Sunday 29 November 22:00 in California is Monday 06:00 UTC: "Monday" is the next day, not a week on.
    const body = 'I am out of the office, back on Monday.';
    const headers = [{ key: 'date', value: 'Sun, 29 Nov 2026 22:00:00 -0800 (PST)' }];
    const r = detectOutOfOffice(mail('Out of office', body, { headers, date: Date.UTC(2026, 10, 30, 6) }), body);
    expect(r?.returnDate).toBe(day('2026-11-30'));
    expect(detectOutOfOffice(mail('Out of office', body, { date: Date.UTC(2026, 10, 30, 6) }), body)?.returnDate).toBe(day('2026-12-07'));
  });

  it('reads an HTML-only note when no text was given', () => {
    const html = '<div>I am away on vacation, Monday May 25 through May 29, 2009.&nbsp; I will be back in the office on June 1.</div>';
    const r = detectOutOfOffice(mail('Out of Office: I like turtles', '', { html, date: Date.UTC(2009, 4, 29, 21, 33) }), '');
    expect(r?.returnDate).toBe(day('2009-06-01'));
  });

  it('counts an RFC 3834 Auto-Submitted header as support for a body-only note', () => {
    const body = 'I am on parental leave.';
    const r = detectOutOfOffice(mail('Re: Quick question', body, { headers: [{ key: 'auto-submitted', value: 'auto-replied' }] }), body);
    expect(r!.confidence).toBeGreaterThanOrEqual(0.9);
  });
});

describe('detectOutOfOffice: human replies that mention an absence are not notes', () => {
  const humans: Array<[subject: string, body: string]> = [
    ['Re: Quick question', 'I was out of office last week, now interested. Can we talk Tuesday?'],
    ['Re: Quick question', "Sorry for the slow reply, I was on vacation. Let's set up a call next week."],
    ['Re: Quick question', "Just got back from leave. Not interested, thanks."],
    ['Re: Quick question', "I'm out of office until Monday but yes, we're interested — send me some times."],
    ['Re: Quick question', 'Happy to chat. I am travelling next week, so maybe the week after?'],
    ['Re: Out of office handling in your CRM', 'Thanks, this looks useful. What does it cost?'],
    ['Re: Quick question', 'Thanks for reaching out. Please remove me from your list.'],
    ['Re: Quick question', 'Ich war im Urlaub, aber ja, wir sind interessiert.'],
    ['Re: Quick question', 'Not the right person, try our COO. She handles ops.'],
    ['Re: Ideas for your team', 'We are fully booked through December 9, circle back in January.'],
    ['Re: Quick question', "I'm travelling to Berlin next month for the conference you mentioned."],
    ['Re: Quick question', "I'm attending your webinar next week, looking forward to it."],
    ['Re: Quick question', 'I was away. What exactly does your product do?'],
    ['Re: Quick question', 'Unfortunately I am unavailable for calls. Email works.'],
    ['Re: Webinar', 'Back on Monday we discussed this internally; we will pass for now.'],
    ['Re: Quick question', "Sounds great, let's talk. I'm out of office now, will send times when I get back."],
    ['Re: Quick question', 'I am on leave until 4 December with limited access to email, but yes — interested, call me after that.'],
  ];
  it.each(humans)('%s / %s', (subject, body) => {
    expect(detectOutOfOffice(mail(subject, body), body)).toBeNull();
  });

  it('ignores an absence sentence far below the opening of a long reply', () => {
    const body = `${'We looked at your proposal in detail and have several thoughts about the pricing model. '.repeat(10)}\nAlso, I am on leave from next month.`;
    expect(detectOutOfOffice(mail('Re: Proposal', body), body)).toBeNull();
  });
});

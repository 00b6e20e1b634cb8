import { describe, expect, it } from 'vitest';
import { extractReturnDate } from './return-date.ts';

// Friday 27 November 2026, 16:30 UTC: the note's Date header in every case below unless stated.
const FRI = Date.UTC(2026, 10, 27, 16, 30);
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

describe('extractReturnDate', () => {
  const cases: Array<[text: string, expected: string | null, reference?: number]> = [
    // English: "back on X" and "until X" are X; "through X" is the next business day
    ['I will be back on Monday.', '2026-11-30'],
    ['I am back on Monday, 7 December.', '2026-12-07'],
    ['Returning 3 December.', '2026-12-03'],
    ['I will return on December 3rd, 2026.', '2026-12-03'],
    ['I will be back in the office on Dec 3.', '2026-12-03'],
    ['I am out of the office until 12/03.', '2026-12-03'],
    ['I am on annual leave until 4th January 2027', '2027-01-04'],
    ['I am away until Tuesday', '2026-12-01'],
    ['Out until tomorrow', '2026-11-28'],
    ['I will be back tomorrow.', '2026-11-28'],
    ['Back after the 5th.', '2026-12-07'] /* the 6th is a Sunday */,
    ['I am travelling through December 9 with limited email.', '2026-12-10'],
    ['I am out of office, returning 2026-12-07.', '2026-12-07'],
    ['Away from 25 to 29 November, back on 2 December', '2026-12-02'],
    ['I am away on vacation, Monday November 30 through December 4, 2026. I will be back in the office on December 7.', '2026-12-07'],
    ['Out until Monday.', '2026-11-30'],
    ['Out through Monday.', '2026-12-01'],
    ['I am away through Friday, December 4.', '2026-12-07'],
    ['I am away until December 4 inclusive.', '2026-12-07'],
    // Lotus Notes: the date on the line after the cue; the start date is not the return
    ['I will be out of the office starting  06/07/2002 and will not return until\n06/14/2002.', '2002-06-14', Date.UTC(2002, 5, 6, 22)],
    ['I will be on leave starting 12/01 and returning 12/14.', '2026-12-14'],
    ['I will be back in the office starting Monday.', '2026-11-30'],
    ['Starting December 1 I am on parental leave.', null],
    ['Out of the office, back Wed.', '2026-12-02'],
    ['I am away and will return Tues 1st Dec.', '2026-12-01'],
    ['Je vous répondrai à mon retour.', null],
    // a weekday and a date written as two sentences
    ['I am out of the office until Wednesday. January 2, 2002.', '2002-01-02', Date.UTC(2001, 11, 28, 16)],
    // a month and day without a year: the next one on or after the note's day
    ['I will return on January 4.', '2027-01-04', Date.UTC(2026, 11, 22)],
    ['I am back on November 30.', '2026-11-30'],
    // German
    ['Ich werde ab 07.06.2002 nicht im Büro sein. Ich kehre zurück am 14.06.2002.', '2002-06-14', Date.UTC(2002, 5, 6, 22)],
    ['Guten Tag, ich bin ab dem 14.12. wieder im Büro.', '2026-12-14'],
    ['Ich bin ab dem 14.12. im Urlaub.', null],
    ['Ich bin bis zum 03.12.2026 nicht im Büro.', '2026-12-04'],
    ['Ich bin bis 3.12. nicht erreichbar.', '2026-12-04'],
    ['Ab dem 7. Dezember bin ich wieder im Büro.', '2026-12-07'],
    ['Am 7.12. bin ich wieder da.', '2026-12-07'],
    ['Ich bin vom 20. bis 30.12. im Urlaub.', '2026-12-31'],
    ['Ich bin bis einschließlich Montag, 14. Dezember abwesend.', '2026-12-15'],
    // French
    ["Je suis absent jusqu'au 3 décembre.", '2026-12-04'],
    ['Je suis absente jusqu’au 3 décembre inclus.', '2026-12-04'],
    ['Je serai de retour le lundi 7 décembre.', '2026-12-07'],
    ['Je suis en congés du 1er au 10 décembre.', '2026-12-11'],
    ['De retour à partir du 14/12.', '2026-12-14'],
    // Spanish
    ['Estoy fuera de la oficina hasta el 3 de diciembre.', '2026-12-04'],
    ['Estaré de vacaciones hasta el 08/12/2026.', '2026-12-09'],
    ['Regresaré el lunes 7 de diciembre.', '2026-12-07'],
    // Italian
    ['Sono fuori ufficio fino al 3 dicembre.', '2026-12-04'],
    ['Rientrerò in ufficio il 9 dicembre.', '2026-12-09'],
    // Portuguese
    ['Estou em viagem e retorno na segunda-feira, 30 de novembro.', '2026-11-30'],
    ['Estou de férias até 3 de dezembro.', '2026-12-04'],
    ['Estarei de volta em 07/12.', '2026-12-07'],
    ['Regresso a 14 de dezembro.', '2026-12-14'],
    // Dutch
    ['Ik ben afwezig tot 3 december.', '2026-12-04'],
    ['Ik ben met vakantie tot en met 11 december.', '2026-12-14'],
    ['Vanaf maandag 7 december ben ik weer aanwezig.', '2026-12-07'],
    ['Op 7 december ben ik weer terug.', '2026-12-07'],
    // Swedish, Danish, Norwegian
    ['Jag är ledig till och med 6 december.', '2026-12-07'],
    ['Jag är tillbaka den 4 januari.', '2027-01-04'],
    ['Jeg er på ferie til og med 6. december.', '2026-12-07'],
    ['Jeg er tilbake mandag 7. desember.', '2026-12-07'],
    // Polish
    ['Jestem na urlopie do 4 grudnia.', '2026-12-07'],
    ['Wracam 7 grudnia.', '2026-12-07'],
    // Japanese, Chinese
    ['12月3日まで不在にしております。', '2026-12-04'],
    ['12月7日より出社いたします。', '2026-12-07'],
    ['2026年12月7日から戻ります。', '2026-12-07'],
    ['我正在休假，将于12月8日返回。', '2026-12-08'],
    ['休假至12月6日。', '2026-12-07'],
    ['12/3(木)まで休暇をいただいております。', '2026-12-04'],
    ['我将于12月7日（周一）返回办公室。', '2026-12-07'],
    ['Ich bin vom 01.12. bis 04.12. nicht im Haus.', '2026-12-07'],
    ['Estoy de vacaciones del 1 al 4 de diciembre.', '2026-12-07'],
    ['Sono in ferie dal 1 al 4 dicembre.', '2026-12-07'],
    ['Ich bin ab 14.12. wieder erreichbar.', '2026-12-14'],
    ["I'm on leave until further notice.", null],
    ["I'm on leave until mid-December.", null],
    // The year turns over: December note, January date
    ['Back on 5 January.', '2027-01-05', Date.UTC(2026, 11, 22)],
    ['Ich bin bis 6.1. im Urlaub.', '2027-01-07', Date.UTC(2026, 11, 22)],
    // dd/mm vs mm/dd: a return date lies ahead and within about six months
    ['I am out of the office until 03/12.', '2026-12-03'], // 12 March is possible too, 3 December is nearer
    ['Out until 25/12.', '2026-12-25'], // month 25 impossible
    ['Ich bin bis 12/03 nicht im Büro.', '2027-03-15'] /* through Friday 12 March: back Monday */, // German reads day first
    // No return date stated, or none that is plausible
    ['I am out of the office this week.', null],
    ['I am out of the office. For urgent matters call 562-922-6216.', null],
    ['I was out last week.', null],
    ['I am out of the office until 3 December 2019.', null], // in the past
    ['Back on 3 December 2027.', null], // more than six months ahead
    ['Meeting on 3 December at 10.30.', null], // no cue: not a return date
    ['The invoice is due on the 3rd.', null],
  ];
  it.each(cases)('%s → %s', (text, expected, reference = FRI) => {
    const found = extractReturnDate(text, reference);
    expect(found?.date ?? null).toBe(expected === null ? null : day(expected));
  });

  it('names the words it read', () => {
    expect(extractReturnDate('Hello, I am back in the office on December 7. Thanks', FRI)?.evidence).toBe('back in the office on December 7');
  });

  it('prefers the stated return over the end of the absence', () => {
    // until the 4th would mean the 5th; the note says the 7th (a weekend in between)
    expect(extractReturnDate('Away until Friday 4 December, back on Monday 7 December.', FRI)?.date).toBe(day('2026-12-07'));
  });
});

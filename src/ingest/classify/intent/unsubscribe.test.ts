import { describe, expect, it } from 'vitest';
import { unsubscribeRequest } from './unsubscribe.ts';

describe('unsubscribeRequest', () => {
  const requests = [
    'Please remove me from your list.',
    'unsubscribe',
    'UNSUBSCRIBE!!!',
    'Take me off your mailing list, thanks',
    'Stop emailing me.',
    'Stop. Emailing. Me.',
    'STOP',
    'Remove.',
    'pls remove',
    'Please stop sending these emails.',
    "Don't email me again.",
    'Do not contact me again.',
    'No more emails please.',
    'Leave me alone.',
    'Opt me out.',
    'I want to be removed from this list.',
    'Your unsubscribe link is broken, so: please take me off.',
    'The unsubscribe link is broken',
    "I've unsubscribed three times already!",
    'Delete my personal data under GDPR.',
    'Hi Mark,\n\nThanks, but no thanks.\nPlease remove me.\n\nBest',
    'Bitte austragen.',
    'Bitte entfernen Sie mich aus Ihrem Verteiler.',
    'Keine weiteren E-Mails, danke.',
    'Merci de me désabonner.',
    "Merci de ne plus m'écrire.",
    'Veuillez me retirer de votre liste.',
    'Por favor, no me escribas más.',
    'Dame de baja, por favor.',
    'Non scrivetemi più.',
    'Por favor, remova-me da lista.',
    'Graag uitschrijven.',
    'Verwijder mij van de lijst.',
    'Ta bort mig från listan.',
    'Wypisz mnie z listy.',
  ];
  it.each(requests)('%j is a request', (text) => {
    const r = unsubscribeRequest(text);
    expect(r).not.toBeNull();
    expect(r!.confidence).toBeGreaterThanOrEqual(0.9);
  });

  const notRequests = [
    'We offer non-stop support.',
    'Stop by our booth at the trade fair!',
    "Don't stop, this is exactly what we need.",
    "Don't stop sending the newsletter, I read every issue.",
    'A one-stop shop for outbound, nice.',
    'Please remove the attachment and resend.',
    'Our unsubscribe rate is too high, can you help?',
    'How do you handle unsubscribes and bounces?',
    'Does the tool process unsubscribe requests automatically?',
    'Stopwatch, stopover, nonstop, bus-stop.',
    'Sounds good, let us talk on Friday.',
    'We could remove a lot of manual work with this.',
    'Please stop by the office on Tuesday.',
    'I removed the old sequence already.',
    '',
  ];
  it.each(notRequests)('%j is not a request', (text) => {
    expect(unsubscribeRequest(text)).toBeNull();
  });

  it('names the words it matched', () => {
    expect(unsubscribeRequest('Hi, take me off your list.')?.reason).toBe('unsubscribe phrase "take me off"');
  });
});

import type { ParsedMail } from '../types.ts';

const SUBJECT = /\b(out of (the )?office|automatic reply|auto-?reply|abwesenheitsnotiz|réponse automatique|respuesta automática|risposta automatica|resposta automática|afwezig|frånvaro)\b|不在|自动回复/i;
const BODY = /\b(i am|i'm) (currently )?(out of (the )?office|on (annual )?leave|away)\b/i;

/** First working version; the full multilingual detector with return dates follows. */
export function detectOutOfOffice(mail: ParsedMail, newText: string, _now?: number): { confidence: number; reason: string; returnDate: number | null } | null {
  if (SUBJECT.test(mail.subject)) return { confidence: 0.9, reason: `subject: ${mail.subject}`, returnDate: null };
  if (BODY.test(newText.slice(0, 400))) return { confidence: 0.7, reason: 'body: out-of-office phrase', returnDate: null };
  return null;
}

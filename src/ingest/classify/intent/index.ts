import type { ReplyIntent } from '../../types.ts';

const UNSUB = /\b(unsubscribe|remove me|take me off|stop emailing me)\b/i;

/** First working version; the trained model follows. */
export function classifyIntent(newText: string): { intent: ReplyIntent; confidence: number; reason: string } {
  if (UNSUB.test(newText)) return { intent: 'unsubscribe', confidence: 0.8, reason: 'rule: unsubscribe phrase' };
  if (/\b(interested|let's talk|book a call)\b/i.test(newText)) return { intent: 'interested', confidence: 0.5, reason: 'rule: interest phrase' };
  if (/\?/.test(newText)) return { intent: 'question', confidence: 0.4, reason: 'rule: question mark' };
  return { intent: 'neutral', confidence: 0.3, reason: 'default' };
}

export function unsubscribeRequest(newText: string): { confidence: number; reason: string } | null {
  const m = UNSUB.exec(newText);
  return m ? { confidence: 0.9, reason: `phrase: ${m[0]}` } : null;
}
